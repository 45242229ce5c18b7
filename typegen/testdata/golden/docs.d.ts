declare namespace docs {
	/**
	First line of the tool.

	Second paragraph with a *\/ that must not end the comment, and an @\ts-ignore that must not act.
	*/
	function documented(input: {
		/** Search text. @minLength 1 @maxLength 200 @pattern ^[^*\/]+$ @example "cats" @example "dogs" */ query: string;
		/** Page number. @integer @minimum 1 @default 1 */ page?: number;
		/** Results per page (max 100). @integer */ per_page?: number;
		/** @format date-time */ since?: string;
		/** Use query instead. @deprecated */ old?: string;
		/** Only a title */ titled?: string;
		/** @exclusiveMinimum 0 @exclusiveMaximum 1 @multipleOf 0.25 */ ratio?: number;
		/** @contentEncoding base64 @contentMediaType image/png */ blob?: string;
		/**
		Tabs andbells
		and CRLF

		and blank lines
		*/
		control?: string;
		/** @default {"a":"a very long default value that goes on and on and on and on and on and on and on and on and on and on and on and on and on and on and on and on and on and on and on and on and on and on and on a… */ big_default?: Record<string, unknown>;
	}): Promise<ToolResult>;
}

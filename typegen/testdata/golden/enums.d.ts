declare namespace enums {
	function literals(input: {
		state: "open" | "closed" | "all";
		/** @integer */ level?: 1 | 2 | 3;
		mixed?: "a" | 1 | true | null;
		nullable_enum?: "x" | null;
		filtered?: "kept";
		name?: "find";
		one?: 1;
		negative?: -1;
		flag?: false;
		shape?: { kind: "point"; at: [1, 2] };
		weird?: "quote\"d" | "line\nbreak" | "back\\slash" | "*/ not a comment end";
	}): Promise<ToolResult>;
}

package typegen

// Names a generated identifier must not take. See AssignNames for how they
// are avoided (a trailing "_").

// reservedWords cannot be declared as a namespace or function: JavaScript's
// reserved words, the strict-mode ones, and the identifiers strict code cannot
// bind or that mean something else inside an async function.
var reservedWords = setOf(
	"break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do",
	"else", "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in",
	"instanceof", "new", "null", "return", "super", "switch", "this", "throw", "true", "try", "typeof",
	"var", "void", "while", "with",
	"implements", "interface", "let", "package", "private", "protected", "public", "static", "yield",
	"await", "arguments", "eval",
)

// reservedMembers would break a namespace object or confuse code that handles
// it: "then" makes an object a thenable (await ns would call it), the others
// shadow Object.prototype members that JavaScript calls implicitly.
var reservedMembers = setOf(
	"then", "constructor", "prototype", "__proto__", "toString", "toLocaleString", "valueOf",
	"hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
	"__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
)

// reservedTypeNames are type names used inside a tool's namespace.
var reservedTypeNames = setOf(
	"Input", "Output", "Promise", "Array", "Record", "Error", "Object",
	"JsonValue", "ContentBlock", "ToolResult", "SandboxResultHandle", "MCPToolError",
)

// reservedGlobals are the global values (starting with a lower-case letter or
// "_", like every namespace we generate) of the agent's environment: the
// declarations of TypeScript's own lib files (ES and DOM, which tsc loads by
// default), plus globalThis, undefined and the CommonJS/Node globals. A
// namespace of the same name would clash with them in tsc, or shadow them at
// run time. TestReservedGlobalsCoverTypeScriptLib checks this list against the
// installed TypeScript.
var reservedGlobals = map[string]bool{
	"sandbox":   true, // the snippet's own services (sandbox.store), see Globals
	"__dirname": true, "__filename": true, "addEventListener": true, "alert": true, "atob": true, "blur": true,
	"btoa": true, "caches": true, "cancelAnimationFrame": true, "cancelIdleCallback": true,
	"captureEvents": true, "clearImmediate": true, "clearInterval": true, "clearTimeout": true,
	"clientInformation": true, "close": true, "closed": true, "confirm": true, "console": true,
	"cookieStore": true, "createImageBitmap": true, "crossOriginIsolated": true, "crypto": true,
	"customElements": true, "decodeURI": true, "decodeURIComponent": true, "devicePixelRatio": true,
	"dispatchEvent": true, "document": true, "encodeURI": true, "encodeURIComponent": true, "escape": true,
	"eval": true, "event": true, "exports": true, "external": true, "fetch": true, "focus": true, "fonts": true,
	"frameElement": true, "frames": true, "getComputedStyle": true, "getSelection": true, "global": true,
	"globalThis": true, "history": true, "importScripts": true, "indexedDB": true, "innerHeight": true,
	"innerWidth": true, "isFinite": true, "isNaN": true, "isSecureContext": true, "length": true,
	"localStorage": true, "location": true, "locationbar": true, "matchMedia": true, "menubar": true,
	"module": true, "moveBy": true, "moveTo": true, "name": true, "navigation": true, "navigator": true,
	"onabort": true, "onafterprint": true, "onanimationcancel": true, "onanimationend": true,
	"onanimationiteration": true, "onanimationstart": true, "onauxclick": true, "onbeforeinput": true,
	"onbeforematch": true, "onbeforeprint": true, "onbeforetoggle": true, "onbeforeunload": true,
	"onblur": true, "oncancel": true, "oncanplay": true, "oncanplaythrough": true, "onchange": true,
	"onclick": true, "onclose": true, "oncommand": true, "oncontextlost": true, "oncontextmenu": true,
	"oncontextrestored": true, "oncopy": true, "oncuechange": true, "oncut": true, "ondblclick": true,
	"ondevicemotion": true, "ondeviceorientation": true, "ondeviceorientationabsolute": true, "ondrag": true,
	"ondragend": true, "ondragenter": true, "ondragleave": true, "ondragover": true, "ondragstart": true,
	"ondrop": true, "ondurationchange": true, "onemptied": true, "onended": true, "onerror": true,
	"onfocus": true, "onformdata": true, "ongamepadconnected": true, "ongamepaddisconnected": true,
	"ongotpointercapture": true, "onhashchange": true, "oninput": true, "oninvalid": true, "onkeydown": true,
	"onkeypress": true, "onkeyup": true, "onlanguagechange": true, "onload": true, "onloadeddata": true,
	"onloadedmetadata": true, "onloadstart": true, "onlostpointercapture": true, "onmessage": true,
	"onmessageerror": true, "onmousedown": true, "onmouseenter": true, "onmouseleave": true,
	"onmousemove": true, "onmouseout": true, "onmouseover": true, "onmouseup": true, "onoffline": true,
	"ononline": true, "onorientationchange": true, "onpagehide": true, "onpagereveal": true, "onpageshow": true,
	"onpageswap": true, "onpaste": true, "onpause": true, "onplay": true, "onplaying": true,
	"onpointercancel": true, "onpointerdown": true, "onpointerenter": true, "onpointerleave": true,
	"onpointermove": true, "onpointerout": true, "onpointerover": true, "onpointerrawupdate": true,
	"onpointerup": true, "onpopstate": true, "onprogress": true, "onratechange": true,
	"onrejectionhandled": true, "onreset": true, "onresize": true, "onrtctransform": true, "onscroll": true,
	"onscrollend": true, "onsecuritypolicyviolation": true, "onseeked": true, "onseeking": true,
	"onselect": true, "onselectionchange": true, "onselectstart": true, "onslotchange": true, "onstalled": true,
	"onstorage": true, "onsubmit": true, "onsuspend": true, "ontimeupdate": true, "ontoggle": true,
	"ontouchcancel": true, "ontouchend": true, "ontouchmove": true, "ontouchstart": true,
	"ontransitioncancel": true, "ontransitionend": true, "ontransitionrun": true, "ontransitionstart": true,
	"onunhandledrejection": true, "onunload": true, "onvolumechange": true, "onwaiting": true,
	"onwebkitanimationend": true, "onwebkitanimationiteration": true, "onwebkitanimationstart": true,
	"onwebkittransitionend": true, "onwheel": true, "open": true, "opener": true, "orientation": true,
	"origin": true, "originAgentCluster": true, "outerHeight": true, "outerWidth": true, "pageXOffset": true,
	"pageYOffset": true, "parent": true, "parseFloat": true, "parseInt": true, "performance": true,
	"personalbar": true, "postMessage": true, "print": true, "process": true, "prompt": true,
	"queueMicrotask": true, "releaseEvents": true, "removeEventListener": true, "reportError": true,
	"requestAnimationFrame": true, "requestIdleCallback": true, "require": true, "resizeBy": true,
	"resizeTo": true, "scheduler": true, "screen": true, "screenLeft": true, "screenTop": true, "screenX": true,
	"screenY": true, "scroll": true, "scrollBy": true, "scrollTo": true, "scrollX": true, "scrollY": true,
	"scrollbars": true, "self": true, "sessionStorage": true, "setImmediate": true, "setInterval": true,
	"setTimeout": true, "speechSynthesis": true, "status": true, "statusbar": true, "stop": true,
	"structuredClone": true, "toString": true, "toolbar": true, "top": true, "undefined": true,
	"unescape": true, "visualViewport": true, "webkitURL": true, "window": true,
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

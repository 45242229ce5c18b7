package main

// beforeMain runs first thing in main. The runtime uses it to turn this same
// binary into a sandbox worker subprocess when it was started as one.
var beforeMainHooks []func()

func beforeMain() {
	for _, h := range beforeMainHooks {
		h()
	}
}

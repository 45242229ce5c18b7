//go:build !unix

package testserver

func freeze() { select {} }

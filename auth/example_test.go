package auth_test

import (
	"context"
	"fmt"

	"github.com/sandboxrt/sandbox/auth"
)

func Example() {
	// The front end learns the principal from authentication and the
	// session from the protocol; together they are the request's Caller.
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{ID: "ci-bot", Tenant: "acme"})
	caller := auth.Caller{Principal: auth.PrincipalFrom(ctx), Session: "3f2a"}
	fmt.Println(caller, caller.HasSession())

	// A request nobody authenticated acts for Anonymous; a stateless one has
	// no session and shares no state with any other request.
	fmt.Println(auth.Caller{Principal: auth.PrincipalFrom(context.Background())}.HasSession())
	// Output:
	// acme/ci-bot/3f2a true
	// false
}

package vectorindex_test

import (
	"context"
	"fmt"

	"github.com/sandboxrt/sandbox/vectorindex"
)

// An index over a few tools: the intent shares no word with the tool it
// finds ("picture" and "screenshot", "money back" and "refund" meet in
// WordNet), and a misspelt intent still lands.
func Example() {
	ctx := context.Background()
	ix, err := vectorindex.New(vectorindex.Options{}) // in memory; set Dir to persist
	if err != nil {
		panic(err)
	}
	_, err = ix.Sync(ctx, []vectorindex.Tool{
		{Server: "github", Name: "list_commits", Description: "Get list of commits of a branch in a GitHub repository"},
		{Server: "slack", Name: "slack_post_message", Description: "Post a new message to a Slack channel"},
		{Server: "playwright", Name: "browser_take_screenshot", Description: "Take a screenshot of the current page"},
		{Server: "stripe", Name: "create_refund", Description: "This tool will refund a payment intent in Stripe"},
	})
	if err != nil {
		panic(err)
	}
	for _, intent := range []string{
		"grab a picture of the web page",
		"give the customer their money back",
		"sned a mesage to the team chanel",
	} {
		hits, err := ix.Search(ctx, intent, 1)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-36s -> %s\n", intent, hits[0].ID)
	}
	// Output:
	// grab a picture of the web page       -> playwright:browser_take_screenshot
	// give the customer their money back   -> stripe:create_refund
	// sned a mesage to the team chanel     -> slack:slack_post_message
}

package mcpserver

// seed returns the tracker's initial state: three projects (one archived),
// five people, fourteen tasks and a few documents. Everything is fixed so
// that examples and tests can name ids and expect exact answers.
func seed() *store {
	s := &store{
		projects: []*Project{
			{
				ID: "PRJ-1", Name: "Website relaunch", Status: "active", Owner: "maria",
				Description: "New marketing site with a faster checkout and a rebuilt blog.",
				Members:     []string{"maria", "li", "omar"},
				Milestones: []Milestone{
					{Name: "Design sign-off", Due: "2026-02-13", Done: true},
					{Name: "Beta on staging", Due: "2026-03-16"},
					{Name: "Public launch", Due: "2026-04-06"},
				},
			},
			{
				ID: "PRJ-2", Name: "Mobile app 2.0", Status: "active", Owner: "kenji",
				Description: "Offline mode, push notifications and a new sync API for the iOS and Android apps.",
				Members:     []string{"kenji", "li", "ana"},
				Milestones: []Milestone{
					{Name: "Sync API frozen", Due: "2026-03-06"},
					{Name: "Store submission", Due: "2026-05-04"},
				},
			},
			{
				ID: "PRJ-3", Name: "Legacy billing migration", Status: "archived", Owner: "ana",
				Description: "Moved invoices from the old billing system; finished in 2025.",
				Members:     []string{"ana", "omar"},
				Milestones:  []Milestone{{Name: "Cut-over", Due: "2025-11-28", Done: true}},
			},
		},
		nextTask: 115,
		docs: map[string]string{
			"README.md": "# Acme project documents\n\nSpecs live under specs/<project>/, runbooks under runbooks/.\n" +
				"Read one with read_document, e.g. path \"specs/mobile/sync-api.md\".\n",
			"specs/website/launch-plan.md": "# Website relaunch: launch plan\n\n" +
				"1. Beta on staging (2026-03-16): checkout and blog behind a feature flag.\n" +
				"2. Load test at 3x last Black Friday's peak.\n" +
				"3. Public launch (2026-04-06): flip the flag, keep the old site for 14 days.\n",
			"specs/website/checkout.md": "# Checkout\n\nOne page, guest checkout allowed, card and PayPal.\n" +
				"Payment errors are shown inline; the cart is never emptied on failure.\n",
			"specs/mobile/sync-api.md": "# Sync API (v2)\n\n" +
				"POST /v2/sync with the client's change log; the server answers with its changes since `cursor`.\n" +
				"Conflicts: last writer wins per field; deletions win over edits.\n" +
				"Frozen on 2026-03-06; after that only additive changes.\n",
			"specs/mobile/push.md": "# Push notifications\n\nAPNs and FCM through one internal service. Users opt in per project.\n",
			"runbooks/deploy.md": "# Deploying\n\n1. Merge to main; CI builds and tags.\n2. `deploy staging <tag>`; smoke tests run.\n" +
				"3. `deploy production <tag>` between 09:00 and 16:00 on weekdays only.\n",
		},
	}
	tasks := []Task{
		{ID: "T-101", ProjectID: "PRJ-1", Title: "Build new checkout page", Status: "in_progress", Priority: "high", Assignee: "li", Labels: []string{"frontend", "checkout"}, Due: "2026-03-09", EstimateHours: 24},
		{ID: "T-102", ProjectID: "PRJ-1", Title: "Migrate blog posts", Status: "todo", Priority: "medium", Assignee: "omar", Labels: []string{"content"}, Due: "2026-03-13", EstimateHours: 12},
		{ID: "T-103", ProjectID: "PRJ-1", Title: "Load test checkout", Status: "blocked", Priority: "high", Assignee: "maria", Labels: []string{"checkout", "performance"}, Due: "2026-03-11", EstimateHours: 8,
			Comments: []string{"Waiting for the staging environment (T-104)."}},
		{ID: "T-104", ProjectID: "PRJ-1", Title: "Provision staging environment", Status: "in_progress", Priority: "urgent", Assignee: "omar", Labels: []string{"infra"}, Due: "2026-02-27", EstimateHours: 6},
		{ID: "T-105", ProjectID: "PRJ-1", Title: "Final design review", Status: "done", Priority: "medium", Assignee: "maria", Labels: []string{"design"}, Due: "2026-02-13", EstimateHours: 3},
		{ID: "T-106", ProjectID: "PRJ-1", Title: "Set up redirects from old URLs", Status: "todo", Priority: "low", Labels: []string{"seo"}, EstimateHours: 4},
		{ID: "T-107", ProjectID: "PRJ-2", Title: "Freeze sync API schema", Status: "in_progress", Priority: "urgent", Assignee: "kenji", Labels: []string{"api", "backend"}, Due: "2026-03-06", EstimateHours: 10},
		{ID: "T-108", ProjectID: "PRJ-2", Title: "Offline mode for Android", Status: "todo", Priority: "high", Assignee: "ana", Labels: []string{"android", "offline"}, Due: "2026-04-10", EstimateHours: 40},
		{ID: "T-109", ProjectID: "PRJ-2", Title: "Offline mode for iOS", Status: "todo", Priority: "high", Assignee: "li", Labels: []string{"ios", "offline"}, Due: "2026-04-10", EstimateHours: 40},
		{ID: "T-110", ProjectID: "PRJ-2", Title: "Push notification service", Status: "blocked", Priority: "medium", Assignee: "kenji", Labels: []string{"backend", "push"}, Due: "2026-03-27", EstimateHours: 16,
			Comments: []string{"Needs the APNs certificate from IT."}},
		{ID: "T-111", ProjectID: "PRJ-2", Title: "Crash on login with expired token", Status: "done", Priority: "urgent", Assignee: "ana", Labels: []string{"bug", "ios"}, Due: "2026-02-20", EstimateHours: 2},
		{ID: "T-112", ProjectID: "PRJ-2", Title: "Write sync API client docs", Status: "todo", Priority: "medium", Labels: []string{"api", "docs"}, Due: "2026-03-20", EstimateHours: 5},
		{ID: "T-113", ProjectID: "PRJ-3", Title: "Export old invoices to archive", Status: "done", Priority: "high", Assignee: "ana", Labels: []string{"billing"}, Due: "2025-11-21", EstimateHours: 12},
		{ID: "T-114", ProjectID: "PRJ-3", Title: "Shut down legacy billing server", Status: "done", Priority: "medium", Assignee: "omar", Labels: []string{"billing", "infra"}, Due: "2025-11-28", EstimateHours: 3},
	}
	for i := range tasks {
		t := tasks[i]
		t.created = 101 + i
		s.tasks = append(s.tasks, &t)
	}
	return s
}

package upstream

// Listing an upstream's tools, resources, templates and prompts, raw: the
// gateway turns the definitions into catalog entries (Host.Listed).

import (
	"context"
	"encoding/json"
	"fmt"
)

// Kinds says which lists a listing re-lists.
type Kinds int

// The kinds of lists.
const (
	Tools      Kinds = 1 << iota // tools/list
	Resources                    // resources/list and resources/templates/list
	Prompts                      // prompts/list
	refreshAll = Tools | Resources | Prompts
)

// Listing is what a server listed, each definition raw as it came. Of the
// kinds re-listed, a nil list means the server does not offer that kind.
type Listing struct {
	Tools, Resources, Templates, Prompts []json.RawMessage
}

// maxListPages and maxListItems bound what one server may list.
const (
	maxListPages = 1000
	maxListItems = 20000
)

// refresh re-lists what kinds says and hands the listing to the host.
func (s *Supervisor) refresh(ctx context.Context, c *Conn, kinds Kinds) error {
	// One refresh at a time per server: a partial refresh (after a
	// list_changed) must start from the listing a full one just published.
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if c.isDead() {
		return &ConnLostError{c.deathReason()}
	}
	var l Listing
	caps := c.caps
	var err error
	if kinds&Tools != 0 && caps.Tools != nil {
		if l.Tools, err = c.listAll(ctx, "tools/list", "tools"); err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
	}
	if kinds&Resources != 0 && caps.Resources != nil {
		if l.Resources, err = c.listAll(ctx, "resources/list", "resources"); err != nil {
			return fmt.Errorf("resources/list: %w", err)
		}
		if l.Templates, err = c.listAll(ctx, "resources/templates/list", "resourceTemplates"); err != nil {
			s.log.Warn("resources/templates/list failed", "server", s.spec.Name, "error", err)
			l.Templates = nil
		}
	}
	if kinds&Prompts != 0 && caps.Prompts != nil {
		if l.Prompts, err = c.listAll(ctx, "prompts/list", "prompts"); err != nil {
			return fmt.Errorf("prompts/list: %w", err)
		}
	}
	s.host.Listed(kinds, l)
	return nil
}

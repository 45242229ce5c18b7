package config

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/sandboxrt/sandbox/gateway"
)

// parsePolicy reads the "policy" block of "gateway":
//
//	{"rules": [{"tools": "github:delete_*", "action": "deny"},
//	           {"tools": "*:*", "annotations": {"destructiveHint": true}, "action": "approve"}],
//	 "approvalTimeout": "2m", "operatorApprovals": true}
func (p *parser) parsePolicy(n *jsonNode) (*gateway.Policy, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, `"policy" must be an object such as {"rules": [{"tools": "github:delete_*", "action": "deny"}]}, found %s`, n.kind)
	}
	pol := &gateway.Policy{}
	var err error
	for _, k := range n.keys {
		switch k.name {
		case "rules":
			if k.value.kind != jsonArray {
				return nil, p.errAt(k.value.offset, `"rules" must be an array of rules, found %s`, k.value.kind)
			}
			for i, rn := range k.value.arr {
				r, err := p.policyRule(rn, i+1)
				if err != nil {
					return nil, err
				}
				pol.Rules = append(pol.Rules, r)
			}
		case "approvalTimeout":
			pol.ApprovalTimeout, err = p.duration(k.value, "approvalTimeout")
		case "operatorApprovals":
			pol.OperatorApprovals, err = p.boolean(k.value, "operatorApprovals")
		case "approvalMode":
			pol.ApprovalMode, err = p.str(k.value, "approvalMode")
			if err == nil && pol.ApprovalMode != gateway.ApprovalByForm && pol.ApprovalMode != gateway.ApprovalByURL {
				err = p.errAt(k.value.offset, `"approvalMode" is %q; give "form" (ask in the client, the default) or "url" (a link to serve's approval page)`, pol.ApprovalMode)
			}
		default:
			return nil, p.errAt(k.offset, `unknown key %q in "policy"; known keys: rules, approvalTimeout, operatorApprovals, approvalMode`, k.name)
		}
		if err != nil {
			return nil, err
		}
	}
	return pol, nil
}

var ruleHints = []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

func (p *parser) policyRule(n *jsonNode, num int) (gateway.PolicyRule, error) {
	var r gateway.PolicyRule
	if n.kind != jsonObject {
		return r, p.errAt(n.offset, `policy rule %d must be an object such as {"tools": "github:delete_*", "action": "deny"}, found %s`, num, n.kind)
	}
	var err error
	for _, k := range n.keys {
		v := k.value
		switch k.name {
		case "tools":
			if r.Tools, err = p.str(v, "tools"); err == nil {
				if _, perr := path.Match(r.Tools, "x:y"); perr != nil || !strings.Contains(r.Tools, ":") {
					err = p.errAt(v.offset, `policy rule %d: "tools" is a pattern over "server:tool" such as "github:delete_*" or "*:*", got %q`, num, r.Tools)
				}
			}
		case "annotations":
			if v.kind != jsonObject {
				return r, p.errAt(v.offset, `policy rule %d: "annotations" must be an object such as {"destructiveHint": true}, found %s`, num, v.kind)
			}
			r.Annotations = map[string]bool{}
			for _, h := range v.keys {
				known := false
				for _, name := range ruleHints {
					known = known || h.name == name
				}
				if !known {
					return r, p.errAt(h.offset, "policy rule %d: unknown annotation %q; known: %s", num, h.name, strings.Join(ruleHints, ", "))
				}
				if r.Annotations[h.name], err = p.boolean(h.value, h.name); err != nil {
					return r, err
				}
			}
		case "action":
			var a string
			if a, err = p.str(v, "action"); err == nil {
				switch gateway.PolicyAction(a) {
				case gateway.PolicyAllow, gateway.PolicyDeny, gateway.PolicyApprove:
					r.Action = gateway.PolicyAction(a)
				default:
					err = p.errAt(v.offset, `policy rule %d: "action" is "allow", "deny" or "approve", got %q`, num, a)
				}
			}
		default:
			return r, p.errAt(k.offset, `unknown key %q in policy rule %d; known keys: tools, annotations, action`, k.name, num)
		}
		if err != nil {
			return r, err
		}
	}
	if r.Tools == "" || r.Action == "" {
		return r, p.errAt(n.offset, `policy rule %d needs "tools" (a pattern such as "github:*") and "action" ("allow", "deny" or "approve")`, num)
	}
	return r, nil
}

// parseAudit reads the "audit" block of "gateway": {"path": "audit.jsonl",
// "maxBytes": 67108864, "keep": 5}.
func (p *parser) parseAudit(n *jsonNode) (*gateway.AuditConfig, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, `"audit" must be an object such as {"path": "audit.jsonl"}, found %s`, n.kind)
	}
	a := &gateway.AuditConfig{}
	var err error
	for _, k := range n.keys {
		switch k.name {
		case "path":
			a.Path, err = p.expandedString(k.value, "path")
			if err == nil && !filepath.IsAbs(a.Path) && p.baseDir != "" {
				a.Path = filepath.Join(p.baseDir, a.Path)
			}
		case "maxBytes":
			var i int
			i, err = p.positiveInt(k.value, "maxBytes")
			a.MaxBytes = int64(i)
		case "keep":
			a.Keep, err = p.positiveInt(k.value, "keep")
		default:
			return nil, p.errAt(k.offset, `unknown key %q in "audit"; known keys: path, maxBytes, keep`, k.name)
		}
		if err != nil {
			return nil, err
		}
	}
	if a.Path == "" {
		return nil, p.errAt(n.offset, `"audit" needs "path": the file to append to`)
	}
	return a, nil
}

// parseOAuthClient reads a server's "oauth" block: {"clientId": "...",
// "clientSecret": "${SECRET}", "scopes": [...], "redirectPort": 8976}, every
// key optional ({} is a login with dynamic client registration).
func (p *parser) parseOAuthClient(n *jsonNode) (*gateway.OAuthConfig, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, `"oauth" must be an object such as {"clientId": "..."} or {}, found %s`, n.kind)
	}
	o := &gateway.OAuthConfig{}
	var err error
	for _, k := range n.keys {
		switch k.name {
		case "clientId":
			o.ClientID, err = p.expandedString(k.value, "clientId")
		case "clientSecret":
			o.ClientSecret, err = p.expandedString(k.value, "clientSecret")
		case "scopes":
			o.Scopes, err = p.stringList(k.value, "scopes", false)
		case "redirectPort":
			o.RedirectPort, err = p.positiveInt(k.value, "redirectPort")
			if err == nil && o.RedirectPort > 65535 {
				err = p.errAt(k.value.offset, `"redirectPort" must be a TCP port (1-65535), got %d`, o.RedirectPort)
			}
		default:
			return nil, p.errAt(k.offset, `unknown key %q in "oauth"; known keys: clientId, clientSecret, scopes, redirectPort`, k.name)
		}
		if err != nil {
			return nil, err
		}
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		return nil, p.errAt(n.offset, `"oauth" has a "clientSecret" but no "clientId"`)
	}
	return o, nil
}

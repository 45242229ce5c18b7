package config

import (
	"github.com/sandboxrt/sandbox/auth"
)

// parseAuth reads the "auth" block of "gateway": how network clients of
// `sandbox serve --http` authenticate (see auth.Config). Secrets may come
// from the environment ("key": "${AGENT_A_KEY}") or be given only as a
// digest ("sha256"), so the file need not hold them.
func (p *parser) parseAuth(n *jsonNode, c *auth.Config) error {
	if n.kind != jsonObject {
		return p.errAt(n.offset, "\"auth\" must be an object such as {\"apiKeys\": [{\"name\": \"agent-a\", \"key\": \"${AGENT_A_KEY}\"}]}, found %s", n.kind)
	}
	for _, k := range n.keys {
		var err error
		switch k.name {
		case "apiKeys":
			c.APIKeys, err = p.apiKeys(k.value)
		case "oauth":
			c.OAuth, err = p.oauth(k.value)
		default:
			return p.errAt(k.offset, "unknown key %q in \"auth\"; known keys: apiKeys, oauth", k.name)
		}
		if err != nil {
			return err
		}
	}
	if err := c.Validate(); err != nil {
		return p.errAt(n.offset, "\"auth\": %v", err)
	}
	return nil
}

func (p *parser) apiKeys(n *jsonNode) ([]auth.APIKey, error) {
	if n.kind != jsonArray {
		return nil, p.errAt(n.offset, "\"apiKeys\" must be an array of {\"name\": ..., \"key\": ...}, found %s", n.kind)
	}
	var keys []auth.APIKey
	for _, e := range n.arr {
		if e.kind != jsonObject {
			return nil, p.errAt(e.offset, "each API key must be an object such as {\"name\": \"agent-a\", \"key\": \"${AGENT_A_KEY}\", \"servers\": [\"demo\"]}, found %s", e.kind)
		}
		var key auth.APIKey
		for _, k := range e.keys {
			var err error
			switch k.name {
			case "name":
				key.Name, err = p.str(k.value, "name")
			case "key":
				key.Key, err = p.expandedString(k.value, "key")
			case "sha256":
				key.SHA256, err = p.str(k.value, "sha256")
			case "tenant":
				key.Tenant, err = p.str(k.value, "tenant")
			case "servers":
				key.Servers, err = p.stringList(k.value, "servers", false)
			case "operator":
				key.Operator, err = p.boolean(k.value, "operator")
			default:
				return nil, p.errAt(k.offset, "unknown key %q in an API key; known keys: name, key, sha256, tenant, servers, operator", k.name)
			}
			if err != nil {
				return nil, err
			}
		}
		keys = append(keys, key)
	}
	return keys, nil
}

func (p *parser) oauth(n *jsonNode) (*auth.OAuthConfig, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, "\"oauth\" must be an object such as {\"issuer\": \"https://login.example.com\", \"audience\": \"https://mcp.example.com/mcp\"}, found %s", n.kind)
	}
	o := &auth.OAuthConfig{}
	for _, k := range n.keys {
		var err error
		switch k.name {
		case "issuer":
			o.Issuer, err = p.expandedString(k.value, "issuer")
		case "audience":
			o.Audience, err = p.expandedString(k.value, "audience")
		case "jwksUrl":
			o.JWKSURL, err = p.expandedString(k.value, "jwksUrl")
		case "resourceUrl":
			o.ResourceURL, err = p.expandedString(k.value, "resourceUrl")
		case "scopes":
			o.Scopes, err = p.stringList(k.value, "scopes", false)
		case "requiredScopes":
			o.RequiredScopes, err = p.stringList(k.value, "requiredScopes", false)
		case "tenantClaim":
			o.TenantClaim, err = p.str(k.value, "tenantClaim")
		case "algorithms":
			o.Algorithms, err = p.stringList(k.value, "algorithms", false)
		case "operatorClaim":
			o.OperatorClaim, err = p.str(k.value, "operatorClaim")
		default:
			return nil, p.errAt(k.offset, "unknown key %q in \"oauth\"; known keys: issuer, audience, jwksUrl, resourceUrl, scopes, requiredScopes, tenantClaim, operatorClaim, algorithms", k.name)
		}
		if err != nil {
			return nil, err
		}
	}
	return o, nil
}

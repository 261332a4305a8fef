package family

import (
	"fmt"
	"strings"

	"github.com/toolshed/toolshed/shared/config"
)

// GrantKind says what a Grant is about.
type GrantKind int

// The kinds of resources a tool function can be granted.
const (
	// TableGrant is DynamoDB actions on one table.
	TableGrant GrantKind = iota + 1
	// ObjectGrant is S3 object actions under one key prefix of the bucket.
	ObjectGrant
	// ListGrant is s3:ListBucket limited to one key prefix.
	ListGrant
	// ModelGrant is bedrock:InvokeModel on one foundation model.
	ModelGrant
)

// Grant is one permission of a deployed tool function. Build grants with
// Table, Objects, List and Model; the CDK app turns each into one IAM
// statement on exactly that resource.
type Grant struct {
	Kind    GrantKind
	Table   config.Table // TableGrant
	Prefix  string       // ObjectGrant, ListGrant: a key prefix ending in "/"
	Model   string       // ModelGrant: a Bedrock model id
	Actions []string
	// Only limits the grant to these tools of the family; empty means all.
	Only []string
}

// For returns the grant limited to the named tools of the family, so that
// each tool function gets only what that tool does.
func (g Grant) For(tools ...string) Grant {
	g.Only = tools
	return g
}

// Table grants DynamoDB actions ("dynamodb:Query", ...) on one table.
func Table(t config.Table, actions ...string) Grant {
	return Grant{Kind: TableGrant, Table: t, Actions: actions}
}

// Objects grants S3 object actions ("s3:GetObject", ...) on every key under
// prefix ("snapshots/").
func Objects(prefix string, actions ...string) Grant {
	return Grant{Kind: ObjectGrant, Prefix: prefix, Actions: actions}
}

// List grants s3:ListBucket for keys under prefix.
func List(prefix string) Grant {
	return Grant{Kind: ListGrant, Prefix: prefix, Actions: []string{"s3:ListBucket"}}
}

// Model grants bedrock:InvokeModel on one foundation model.
func Model(id string) Grant {
	return Grant{Kind: ModelGrant, Model: id, Actions: []string{"bedrock:InvokeModel"}}
}

// Check reports a malformed grant: an unknown table, a prefix that is not a
// folder, an action of another service.
func (g Grant) Check() error {
	service := ""
	switch g.Kind {
	case TableGrant:
		if _, ok := config.TableSettings[g.Table]; !ok {
			return fmt.Errorf("grant on unknown table %q", g.Table)
		}
		service = "dynamodb:"
	case ObjectGrant, ListGrant:
		if g.Prefix == "" || !strings.HasSuffix(g.Prefix, "/") || strings.ContainsAny(g.Prefix, "*?") {
			return fmt.Errorf("grant prefix %q must be a folder such as \"snapshots/\"", g.Prefix)
		}
		service = "s3:"
	case ModelGrant:
		if g.Model == "" {
			return fmt.Errorf("model grant without a model id")
		}
		service = "bedrock:"
	default:
		return fmt.Errorf("grant of unknown kind %d", g.Kind)
	}
	if len(g.Actions) == 0 {
		return fmt.Errorf("grant without actions")
	}
	for _, a := range g.Actions {
		if !strings.HasPrefix(a, service) || strings.Contains(a, "*") {
			return fmt.Errorf("action %q does not belong in a %s grant (no wildcards)", a, strings.TrimSuffix(service, ":"))
		}
	}
	return nil
}

// UsesBucket reports whether any grant is on the S3 bucket.
func UsesBucket(grants []Grant) bool {
	for _, g := range grants {
		if g.Kind == ObjectGrant || g.Kind == ListGrant {
			return true
		}
	}
	return false
}

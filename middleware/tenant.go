package middleware

import (
	"bytes"
	"strings"

	"github.com/fxhq/fx"
)

// DefaultTenantHeader is the header Tenant reads by default.
const DefaultTenantHeader = "X-Tenant-ID"

// MaxTenantIDLength is the longest tenant ID ValidTenantID accepts (a DNS
// label's limit, so every valid ID can also be a subdomain).
const MaxTenantIDLength = 63

// Reasons of Tenant's refusals (details.reason).
const (
	ReasonMissingTenant     = "missing_tenant"     // 400: none resolved
	ReasonMalformedTenant   = "malformed_tenant"   // 400: present but not a valid tenant ID
	ReasonConflictingTenant = "conflicting_tenant" // 400: header and subdomain disagree
	ReasonTenantMismatch    = "tenant_mismatch"    // 403: principal of another tenant
)

// TenantConfig configures Tenant.
type TenantConfig struct {
	// Required answers 400 FX_TENANT_REQUIRED when no valid tenant ID is
	// resolved. When false such a request goes on with no tenant
	// (TenantFrom reports false).
	Required bool

	// Header is the request header carrying the tenant ID. Default
	// "X-Tenant-ID"; "-" disables the header (subdomain only).
	Header string

	// BaseDomain enables the subdomain: with "api.example.com", the host
	// acme.api.example.com (any port, any letter case, with or without a
	// trailing dot) names tenant "acme". The base domain itself, hosts
	// outside it, IP addresses, deeper names (a.b.api.example.com) and
	// the Reserved labels name no tenant. Subdomain IDs are lower-cased.
	// The Host header is used as received; fx does not trust
	// X-Forwarded-Host. "" disables the subdomain.
	BaseDomain string

	// Reserved lists subdomain labels that are not tenants. Default
	// {"www"}. Compared case-insensitively.
	Reserved []string

	// Validate decides which IDs are well-formed. Default ValidTenantID.
	// An ID it refuses is treated as absent: it never reaches the handler.
	Validate func(id string) bool

	// MatchPrincipal cross-checks a resolved tenant against the principal's
	// Tenant (Principal.Tenant, the JWT's tenant claim): a principal of
	// another tenant, or one with no tenant claim, gets 403 FX_FORBIDDEN;
	// no principal at all gets 401 FX_UNAUTHENTICATED. Put Auth before
	// Tenant. Comparison is exact (subdomain IDs are lower-case). A request
	// that names no tenant is not cross-checked (Required decides).
	MatchPrincipal bool
}

// ValidTenantID is the default tenant ID pattern: 1 to 63 bytes of ASCII
// letters, digits, '-' and '_', starting with a letter or digit
// (^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$). Slugs ("acme", "acme-eu") and UUIDs
// fit; nothing with spaces, quotes, dots, slashes, '%', control bytes or
// non-ASCII does. It does not allocate.
func ValidTenantID(id string) bool {
	if len(id) == 0 || len(id) > MaxTenantIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		ch := id[i]
		switch {
		case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9':
		case (ch == '-' || ch == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}

// TenantFrom returns the tenant ID Tenant resolved for this request, or
// ("", false) when there is none. It does not allocate.
func TenantFrom(c *fx.Ctx) (string, bool) {
	if id, ok := c.Value(tenantKey{}).(*string); ok && id != nil {
		return *id, true
	}
	return "", false
}

type tenantResolver struct {
	header     string
	base       string // lower case, no leading/trailing dot
	reserved   []string
	validate   func(string) bool
	custom     bool
	required   bool
	match      bool
	errMissing *fx.Error
	errBad     *fx.Error
}

// Tenant returns middleware that resolves the request's tenant ID from the
// header and/or the subdomain (see TenantConfig), stores it for TenantFrom
// and calls next.
//
//   - Nothing resolvable (absent, or malformed: a malformed ID counts as
//     absent) with Required: 400 FX_TENANT_REQUIRED, reason
//     "missing_tenant" or "malformed_tenant"; the message never echoes the
//     value.
//   - Header and subdomain both valid but different: 400 FX_BAD_REQUEST,
//     reason "conflicting_tenant" (a request must not be able to pick one
//     tenant by host and another by header).
//   - MatchPrincipal: 403 FX_FORBIDDEN (reason "tenant_mismatch") or 401,
//     as documented there.
//
// Cost: header and host are checked in place without allocating; a resolved
// ID costs one copy (two small allocations), except with MatchPrincipal,
// where the principal's own copy is used (none).
//
// Tenant panics when both sources are disabled (Header "-" and no
// BaseDomain) or Header is not a valid header name.
func Tenant(cfg TenantConfig) fx.Middleware {
	t := &tenantResolver{
		header:   cfg.Header,
		base:     strings.ToLower(strings.Trim(cfg.BaseDomain, ".")),
		validate: cfg.Validate,
		custom:   cfg.Validate != nil,
		required: cfg.Required,
		match:    cfg.MatchPrincipal,
	}
	switch t.header {
	case "":
		t.header = DefaultTenantHeader
	case "-":
		t.header = ""
	}
	if t.header == "" && t.base == "" {
		panic("middleware.Tenant: both sources are disabled; set Header or BaseDomain")
	}
	if t.header != "" && !isToken(t.header) {
		panic("middleware.Tenant: Header " + t.header + " is not a valid header name")
	}
	if t.validate == nil {
		t.validate = ValidTenantID
	}
	t.reserved = cfg.Reserved
	if t.reserved == nil {
		t.reserved = []string{"www"}
	}
	var how string
	switch {
	case t.header != "" && t.base != "":
		how = "send the " + t.header + " header or use a tenant subdomain of " + t.base
	case t.header != "":
		how = "send the " + t.header + " header"
	default:
		how = "use a tenant subdomain of " + t.base
	}
	t.errMissing = fx.NewCatalogError(fx.ErrorCodes.TenantRequired,
		"Tenant required: "+how, FailureDetails{Reason: ReasonMissingTenant})
	t.errBad = fx.NewCatalogError(fx.ErrorCodes.TenantRequired,
		"Tenant required: the tenant ID is malformed", FailureDetails{Reason: ReasonMalformedTenant})
	return fx.Declare(t.handle, tenantDeclaration(cfg, t.header, t.base, DeclareFailures(t.errMissing, t.errBad)[0]))
}

func (t *tenantResolver) handle(c *fx.Ctx, next fx.Next) error {
	rc := c.RequestCtx()
	var fromHeader, fromHost []byte
	malformed := false
	if t.header != "" {
		if h := rc.Request.Header.Peek(t.header); len(h) > 0 {
			if t.valid(h) {
				fromHeader = h
			} else {
				malformed = true
			}
		}
	}
	if t.base != "" {
		if sub, ok := t.subdomain(rc.Host()); ok {
			if t.valid(sub) {
				fromHost = sub
			} else {
				malformed = true
			}
		}
	}

	// raw is the resolved ID as received; fold means it came from the host
	// and is lower-cased when copied.
	var (
		raw  []byte
		fold bool
	)
	switch {
	case fromHeader != nil && fromHost != nil:
		if !equalLower(b2s(fromHeader), fromHost) {
			return errConflictingTenant
		}
		raw = fromHeader // equal to the lower-cased subdomain
	case fromHeader != nil:
		raw = fromHeader
	case fromHost != nil:
		raw, fold = fromHost, true
	default:
		if t.required {
			if malformed {
				return t.errBad
			}
			return t.errMissing
		}
		return next()
	}

	if t.match {
		p, err := requirePrincipal(c)
		if err != nil {
			return err
		}
		if p.Tenant == "" || (fold && !equalLower(p.Tenant, raw)) || (!fold && p.Tenant != b2s(raw)) {
			return forbid(c, p, errTenantMismatch)
		}
		// The principal is read-only and outlives the request: point at
		// its copy of the ID, which costs no allocation.
		c.SetValue(tenantKey{}, &p.Tenant)
		return next()
	}
	id := string(raw)
	if fold {
		id = strings.ToLower(id)
	}
	c.SetValue(tenantKey{}, &id)
	return next()
}

// equalLower reports whether the ID h equals the subdomain label sub once
// sub is lower-cased (subdomain IDs are always lower case).
func equalLower(h string, sub []byte) bool {
	if len(h) != len(sub) {
		return false
	}
	for i, ch := range sub {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if h[i] != ch {
			return false
		}
	}
	return true
}

func (t *tenantResolver) valid(id []byte) bool {
	if !t.custom {
		return ValidTenantID(b2s(id))
	}
	return t.validate(string(id)) // a custom validator may keep its argument
}

// subdomain returns the label of host directly under the base domain, and
// whether there is one. The bare base domain, other domains, IP literals,
// deeper names and reserved labels report false.
func (t *tenantResolver) subdomain(host []byte) ([]byte, bool) {
	if len(host) == 0 || host[0] == '[' { // empty or an IPv6 literal
		return nil, false
	}
	if i := bytes.LastIndexByte(host, ':'); i >= 0 {
		if bytes.IndexByte(host[:i], ':') >= 0 { // a bare IPv6 address
			return nil, false
		}
		host = host[:i]
	}
	if n := len(host); n > 0 && host[n-1] == '.' {
		host = host[:n-1]
	}
	n, nb := len(host), len(t.base)
	if n <= nb+1 || host[n-nb-1] != '.' || !strings.EqualFold(b2s(host[n-nb:]), t.base) {
		return nil, false
	}
	sub := host[:n-nb-1]
	if bytes.IndexByte(sub, '.') >= 0 { // a.b.base: not a tenant (also every IPv4 address)
		return nil, false
	}
	for _, r := range t.reserved {
		if strings.EqualFold(b2s(sub), r) {
			return nil, false
		}
	}
	return sub, true
}

var (
	errTenantMismatch = fx.NewCatalogError(fx.ErrorCodes.Forbidden,
		"Forbidden: the principal does not belong to the requested tenant", FailureDetails{Reason: ReasonTenantMismatch})
	errConflictingTenant = fx.NewCatalogError(fx.ErrorCodes.BadRequest,
		"Tenant header and subdomain name different tenants", FailureDetails{Reason: ReasonConflictingTenant})
)

// What Tenant declares besides auth's 401 and its own 400
// FX_TENANT_REQUIRED (tenantDeclaration), written from the errors it
// sends.
var (
	declBadRequest     = DeclareFailures(errConflictingTenant)[0]
	declTenantMismatch = DeclareFailures(errTenantMismatch)[0]
)

// tenantDeclaration is what Tenant under cfg declares: 400
// FX_TENANT_REQUIRED for a missing (Required) or malformed tenant; 400
// FX_BAD_REQUEST when both the header and the subdomain can name one and
// they differ; 401 and 403 with MatchPrincipal; and its header (header,
// after defaults; "" when disabled) as a parameter, required when it is
// the only source of a Required tenant, with the pattern of ValidTenantID
// unless cfg.Validate replaces it.
func tenantDeclaration(cfg TenantConfig, header, base string, tenantRequired *fx.Error) fx.Declaration {
	d := fx.Declaration{Errors: []*fx.Error{tenantRequired}}
	if header != "" && base != "" {
		d.Errors = append(d.Errors, declBadRequest)
	}
	if cfg.MatchPrincipal {
		d.Errors = append(d.Errors, declUnauthenticated, declTenantMismatch)
	}
	if header != "" {
		p := fx.ParameterDoc{Name: header, In: "header", Required: cfg.Required && base == "",
			Description: "The tenant the request is for.", Schema: map[string]any{"type": "string"}}
		if base != "" {
			p.Description += " A tenant subdomain of " + base + " may name it instead; both must then agree."
		}
		if cfg.Validate == nil {
			p.Schema = map[string]any{"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$"}
		}
		d.Parameters = []fx.ParameterDoc{p}
	}
	return d
}

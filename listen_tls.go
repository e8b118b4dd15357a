package fx

import (
	"crypto/tls"
	"net"
	"slices"
)

// Serving HTTPS is one setting, Config.TLS, on the one path every listener
// takes: Listen, Serve and Run (with the hand-off and socket activation)
// wrap each listening socket with tls.NewListener before the connection
// layer, so the connection limit (a refused connection gets its 503
// envelope over TLS), lingering close, the phase deadlines, Shutdown and
// the hand-off behave as they do over TCP. Boot prepares the
// configuration once (tlsServerConfig) and refuses one that cannot serve.

// tlsServerConfig returns the configuration Serve wraps listeners with:
// cfg cloned (a later change to the caller's value changes nothing), its
// NextProtos set to "http/1.1" when empty (fasthttp speaks HTTP/1.1
// only: advertising "h2" would break clients) and a MinVersion below TLS
// 1.2 raised to it. A cfg without a certificate (Certificates,
// GetCertificate or GetConfigForClient), or one offering h2, is a
// configuration error reported by Boot.
func tlsServerConfig(cfg *tls.Config) (*tls.Config, error) {
	const what = "Config.TLS"
	if len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil {
		return nil, configError(what, "the tls.Config has no certificate (Certificates, GetCertificate or GetConfigForClient)")
	}
	if slices.Contains(cfg.NextProtos, "h2") {
		return nil, configError(what, "NextProtos offers h2, which fasthttp does not speak")
	}
	cfg = cfg.Clone()
	if len(cfg.NextProtos) == 0 {
		cfg.NextProtos = []string{"http/1.1"}
	}
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	return cfg, nil
}

// tlsListener wraps ln with the App's TLS configuration, or returns ln
// when the App serves plain HTTP. The TLS handshake happens on the
// connection's first read, inside ReadTimeout; RequestCtx().IsTLS() and
// TLSConnectionState() report the connection (the security-headers
// middleware sends HSTS only then).
func (a *App) tlsListener(ln net.Listener) net.Listener {
	if a.tls == nil {
		return ln
	}
	return tls.NewListener(ln, a.tls)
}

// DefaultTLSConfig returns fx's default server TLS configuration, to fill
// in with certificates and set as Config.TLS: TLS 1.2 minimum (1.3 is
// negotiated whenever the client has it), for TLS 1.2 only ECDHE key
// exchange with AEAD ciphers (AES-GCM, ChaCha20-Poly1305: forward
// secrecy, no CBC or RSA key exchange); TLS 1.3 suites are Go's, which
// are all AEAD; ALPN "http/1.1". Curve preferences are Go's defaults
// (including the hybrid post-quantum key exchange).
//
//	cert, err := tls.LoadX509KeyPair("cert.pem", "key.pem")
//	...
//	cfg := fx.DefaultTLSConfig()
//	cfg.Certificates = []tls.Certificate{cert}
//	app := fx.New(fx.Config{TLS: cfg})
func DefaultTLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		CipherSuites: []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
			tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		},
		NextProtos: []string{"http/1.1"},
	}
}

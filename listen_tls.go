package fx

import (
	"crypto/tls"
	"errors"
	"net"
	"slices"
)

// ListenTLS is Listen over TLS with the certificate chain and key in the
// given PEM files, and the defaults of TLSConfig. It refuses to start
// (returning the error) when Boot fails or the files cannot be loaded.
func (a *App) ListenTLS(addr, certFile, keyFile string) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return err
	}
	cfg := TLSConfig()
	cfg.Certificates = []tls.Certificate{cert}
	return a.ListenTLSConfig(addr, cfg)
}

// ListenTLSConfig is Listen over TLS with cfg (see ServeTLS). Its
// listening sockets come from where Listen's do, and Upgrade hands them on.
func (a *App) ListenTLSConfig(addr string, cfg *tls.Config) error {
	if err := a.Boot(); err != nil {
		return err
	}
	if err := checkTLSConfig(cfg); err != nil {
		return err
	}
	lns, err := a.listen(addr) // inherited, activated or new, as for Listen
	if err != nil {
		return err
	}
	reportReady()
	return a.serveAll(lns, func(ln net.Listener) error { return a.ServeTLS(ln, cfg) })
}

// ServeTLS is Serve over TLS: it wraps ln with tls.NewListener(ln, cfg)
// and goes through Serve, so the connection limit (a refused connection
// gets its 503 envelope over TLS), lingering close, Shutdown and its
// return rules are the same. cfg must have a certificate (Certificates,
// GetCertificate or GetConfigForClient). cfg is cloned; when its
// NextProtos is empty it is set to "http/1.1" (fasthttp speaks HTTP/1.1
// only: advertising "h2" would break clients), and a MinVersion below TLS
// 1.2 is raised to it. Start from TLSConfig for the other defaults.
//
// The TLS handshake happens on the connection's first read, inside
// ReadTimeout; RequestCtx().IsTLS() and TLSConnectionState() report the
// connection (the security-headers middleware sends HSTS only then).
func (a *App) ServeTLS(ln net.Listener, cfg *tls.Config) error {
	if err := checkTLSConfig(cfg); err != nil {
		ln.Close()
		return err
	}
	cfg = cfg.Clone()
	if len(cfg.NextProtos) == 0 {
		cfg.NextProtos = []string{"http/1.1"}
	}
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	return a.Serve(tls.NewListener(ln, cfg))
}

func checkTLSConfig(cfg *tls.Config) error {
	if cfg == nil || (len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil) {
		return errors.New("fx: ServeTLS: the tls.Config has no certificate")
	}
	if slices.Contains(cfg.NextProtos, "h2") {
		return errors.New("fx: ServeTLS: NextProtos offers h2, which fasthttp does not speak")
	}
	return nil
}

// TLSConfig returns fx's default server TLS configuration, to fill in with
// certificates: TLS 1.2 minimum (1.3 is negotiated whenever the client
// has it), for TLS 1.2 only ECDHE key exchange with AEAD ciphers
// (AES-GCM, ChaCha20-Poly1305: forward secrecy, no CBC or RSA key
// exchange); TLS 1.3 suites are Go's, which are all AEAD; ALPN
// "http/1.1". Curve preferences are Go's defaults (including the hybrid
// post-quantum key exchange).
func TLSConfig() *tls.Config {
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

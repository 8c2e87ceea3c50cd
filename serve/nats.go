package serve

// NATS plumbing: the embedded nats-server and the client connection with
// the options natscli users know.

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// NATSConfig says where specd's NATS is and how to log in.
type NATSConfig struct {
	// URLs of an existing deployment; empty starts an embedded server.
	URLs []string
	// Listen is the embedded server's HOST:PORT (default 127.0.0.1:4222;
	// port -1 picks a free one). Unset with ConfigFile: the file's.
	Listen string
	// ConfigFile is a nats-server configuration file for the embedded
	// server (accounts, users, permissions, JetStream store, routes).
	ConfigFile string
	// JetStream enables JetStream in the embedded server (StoreDir: its
	// store; empty: the config file's, else a directory under the system
	// temporary directory).
	JetStream bool
	StoreDir  string

	// Client credentials and TLS, as the nats CLI takes them.
	Creds, NKey, User, Password, Token string
	TLSCert, TLSKey, TLSCA             string
	// Name is the client connection's name (default "specd").
	Name string
}

// startEmbedded starts an in-process nats-server.
func startEmbedded(c NATSConfig, log zerolog.Logger) (*server.Server, error) {
	opts := &server.Options{}
	if c.ConfigFile != "" {
		o, err := server.ProcessConfigFile(c.ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("serve: --nats-config %s: %w", c.ConfigFile, err)
		}
		opts = o
	}
	if c.Listen != "" || c.ConfigFile == "" {
		listen := c.Listen
		if listen == "" {
			listen = "127.0.0.1:4222"
		}
		host, port, err := net.SplitHostPort(listen)
		if err != nil {
			return nil, fmt.Errorf("serve: --nats-listen %q: want HOST:PORT: %w", listen, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < -1 || p > 65535 {
			return nil, fmt.Errorf("serve: --nats-listen %q: bad port", listen)
		}
		opts.Host, opts.Port = host, p
	}
	if c.JetStream {
		opts.JetStream = true
		if c.StoreDir != "" {
			opts.StoreDir = c.StoreDir
		}
	}
	opts.NoSigs = true // specd handles SIGINT/SIGTERM
	opts.ServerName = firstNonEmpty(opts.ServerName, "specd")
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("serve: embedded nats-server: %w", err)
	}
	srv.SetLoggerV2(natsLogger{log.With().Str("component", "nats-server").Logger()}, false, false, false)
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("serve: embedded nats-server on %s:%d did not start (is the port taken?)", opts.Host, opts.Port)
	}
	return srv, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// clientOptions are the nats.go options of c, plus reconnect handling.
func clientOptions(c NATSConfig) ([]nats.Option, error) {
	opts := []nats.Option{
		nats.Name(firstNonEmpty(c.Name, "specd")),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.CustomReconnectDelay(func(attempts int) time.Duration {
			// Exponential backoff from 250 ms, at most 5 s.
			d := 250 * time.Millisecond << min(attempts, 5)
			return min(d, 5*time.Second)
		}),
	}
	if c.Creds != "" {
		opts = append(opts, nats.UserCredentials(c.Creds))
	}
	if c.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(c.NKey)
		if err != nil {
			return nil, fmt.Errorf("serve: --nkey %s: %w", c.NKey, err)
		}
		opts = append(opts, o)
	}
	if c.User != "" || c.Password != "" {
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	}
	if c.Token != "" {
		opts = append(opts, nats.Token(c.Token))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return nil, fmt.Errorf("serve: --tlscert and --tlskey go together")
	}
	if c.TLSCert != "" {
		opts = append(opts, nats.ClientCert(c.TLSCert, c.TLSKey))
	}
	if c.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.TLSCA))
	}
	return opts, nil
}

// Connect connects a client (specd run, tests) to c.URLs with c's
// credentials and TLS options.
func Connect(c NATSConfig) (*nats.Conn, error) {
	opts, err := clientOptions(c)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(joinURLs(c.URLs), opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS at %s: %w", joinURLs(c.URLs), err)
	}
	return nc, nil
}

// natsLogger sends the embedded server's log to zerolog.
type natsLogger struct{ l zerolog.Logger }

func (n natsLogger) Noticef(f string, v ...any) { n.l.Debug().Msgf(f, v...) }
func (n natsLogger) Warnf(f string, v ...any)   { n.l.Warn().Msgf(f, v...) }
func (n natsLogger) Fatalf(f string, v ...any)  { n.l.Error().Msgf(f, v...) }
func (n natsLogger) Errorf(f string, v ...any)  { n.l.Error().Msgf(f, v...) }
func (n natsLogger) Debugf(f string, v ...any)  { n.l.Trace().Msgf(f, v...) }
func (n natsLogger) Tracef(f string, v ...any)  { n.l.Trace().Msgf(f, v...) }

// joinURLs joins deployment URLs for nats.Connect.
func joinURLs(u []string) string { return strings.Join(u, ",") }

// Package broker starts real Apache Kafka brokers for kwire's tests, examples and
// benchmarks: a single-node KRaft broker (process.roles=broker,controller) on free
// loopback ports, with PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL listeners, a
// certificate made with keytool at start, PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 users,
// and OAUTHBEARER with Kafka's unsecured JWS validator (any unsigned token whose claims
// are well formed is accepted: a test mechanism, never one for production). Options.ReauthMs
// sets connections.max.reauth.ms (KIP-368); Halt, Resume, Restart, Pause and Continue let
// a test take the broker away under a live client.
//
// The broker's jars come from the Maven project beside this package (pom.xml), which
// copies org.apache.kafka:kafka_2.13 and its runtime dependencies into
// build/kafka/<version>/lib of the repository; LibDir runs it on first use. Java 17 and
// Maven must be installed.
//
// A broker never outlives its owner: every failure path of Start kills the process,
// Stop waits for it to exit, and on Linux the process is killed when the Go process that
// started it dies (Pdeathsig).
package broker

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultVersion is the Kafka release started when Options.Version is empty.
const DefaultVersion = "4.4.0"

// Versions are the Kafka releases the launcher is tested with.
var Versions = []string{"4.4.0", "3.9.2"}

// Listeners are the names of the broker's client listeners, as Addr takes them.
var Listeners = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

// Mechanisms are the SASL mechanisms with a user and password that the broker enables,
// as User takes them. OAuthBearer is enabled too.
var Mechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// OAuthBearer is the token mechanism the SASL listeners also enable. Its validator is
// Kafka's unsecured one (OAuthBearerUnsecuredValidatorCallbackHandler): the token is an
// unsigned JWS ({"alg":"none"}) with a "sub" claim and an "exp" claim in seconds.
const OAuthBearer = "OAUTHBEARER"

// oauthValidator and oauthLogin are the unsecured handlers of Kafka's OAUTHBEARER,
// present under these names in every tested release.
const (
	oauthValidator = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler"
	oauthLogin     = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler"
)

// Options configures Start.
type Options struct {
	// Version is the Kafka release: "4.4.0" (the default when empty) or "3.9.2".
	Version string
	// Props are extra server properties, e.g. "auto.create.topics.enable": "false".
	// They override the launcher's own settings of the same name.
	Props map[string]string
	// ReauthMs, when above 0, sets connections.max.reauth.ms: the broker tells SASL
	// clients that session lifetime (SaslAuthenticate v1+ sessionLifetimeMs) and closes
	// a connection that sends a request after it without re-authenticating (KIP-368).
	ReauthMs int
}

// Broker is a running Kafka broker process.
type Broker struct {
	version string
	dir     string
	addrs   map[string]string
	users   map[string][2]string
	certPEM []byte
	logPath string
	started time.Duration
	phases  []string

	java, lib string
	propsPath string

	procMu  sync.Mutex // guards proc, done and waitErr across Halt and Resume
	proc    *os.Process
	done    chan struct{} // closed when the process has exited
	waitErr error         // the exit status, valid once done is closed
	logFile *os.File

	stopOnce sync.Once
	stopErr  error
}

// tempPrefix names the brokers' temporary directories; ownerFile in each holds the pid
// of the process that started the broker.
const (
	tempPrefix = "kwire-broker-"
	ownerFile  = "owner.pid"
	certFile   = "broker.pem"
)

// removeStale removes the temporary directories of brokers whose owner process is gone
// (killed before it could call Stop; its broker died with it).
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue // being created, or not ours to judge
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if processGone(pid) {
			os.RemoveAll(d)
		}
	}
}

// startTimeout bounds Start when its context has no deadline.
const startTimeout = 90 * time.Second

// stopTimeout is how long Stop waits for a clean shutdown before it kills the process.
const stopTimeout = 30 * time.Second

// Start formats storage in a new temporary directory, starts a single-node KRaft broker
// on free 127.0.0.1 ports with listeners PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL, and
// returns once the broker answers ApiVersions and lists itself in Metadata. The error of
// a failed start includes the tail of the broker's log. The context bounds the start only
// (90 s when it has no deadline); the broker runs until Stop or Kill.
func Start(ctx context.Context, opts Options) (*Broker, error) {
	version := opts.Version
	if version == "" {
		version = DefaultVersion
	}
	java, err := javaPath()
	if err != nil {
		return nil, err
	}
	lib, err := LibDir(version)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}
	t0 := time.Now()
	// The ports are found free and then handed to Kafka, so another process can take one
	// in between; a start that fails to bind is retried with new ports.
	var lastErr, firstExit error
	exitedOnce := false
	for attempt := 0; attempt < 3; attempt++ {
		props := opts.Props
		if opts.ReauthMs > 0 {
			props = map[string]string{"connections.max.reauth.ms": strconv.Itoa(opts.ReauthMs)}
			for k, v := range opts.Props {
				props[k] = v
			}
		}
		b, err := start(ctx, java, lib, version, props)
		if err == nil {
			b.started = time.Since(t0)
			return b, nil
		}
		lastErr = err
		var be *bindError
		var ee *earlyExitError
		switch {
		case ctx.Err() != nil:
		case errors.As(err, &be):
			continue
		case errors.As(err, &ee) && !exitedOnce:
			// A broker that exits before serving, with nothing in its log to say why, was
			// seen once on a loaded machine; a second failure is reported with both logs.
			exitedOnce, firstExit = true, err
			continue
		}
		break
	}
	if firstExit != nil && lastErr != firstExit {
		lastErr = fmt.Errorf("%w\n--- the attempt before it ---\n%v", lastErr, firstExit)
	}
	return nil, lastErr
}

// earlyExitError is a start whose broker process exited before it served.
type earlyExitError struct{ err error }

// Error returns the start error.
func (e *earlyExitError) Error() string { return e.err.Error() }

// Unwrap returns the start error.
func (e *earlyExitError) Unwrap() error { return e.err }

// bindError is a start that failed because a port was taken.
type bindError struct{ err error }

// Error returns the start error.
func (e *bindError) Error() string { return e.err.Error() }

// Unwrap returns the start error.
func (e *bindError) Unwrap() error { return e.err }

func start(ctx context.Context, java, lib, version string, props map[string]string) (b *Broker, err error) {
	removeStale()
	dir, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		return nil, fmt.Errorf("broker %s: %w", version, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("broker %s: %w", version, err)
	}
	b = &Broker{version: version, dir: dir, done: make(chan struct{}), logPath: filepath.Join(dir, "broker.log"), java: java, lib: lib}
	defer func() {
		if err != nil {
			b.kill()
			if b.logFile != nil {
				b.logFile.Close()
			}
			os.RemoveAll(dir)
			b = nil
		}
	}()

	ports, err := freePorts(5)
	if err != nil {
		return b, fmt.Errorf("broker %s: free ports: %w", version, err)
	}
	b.addrs = map[string]string{}
	for i, l := range Listeners {
		b.addrs[l] = "127.0.0.1:" + strconv.Itoa(ports[i])
	}
	controller := "127.0.0.1:" + strconv.Itoa(ports[4])
	b.users = map[string][2]string{
		"PLAIN":         {"kwire-plain", randomHex(12)},
		"SCRAM-SHA-256": {"kwire-scram256", randomHex(12)},
		"SCRAM-SHA-512": {"kwire-scram512", randomHex(12)},
	}

	storePass := randomHex(12)
	propsPath := filepath.Join(dir, "server.properties")
	b.propsPath = propsPath
	if err := os.WriteFile(propsPath, b.serverProperties(controller, storePass, props), 0o600); err != nil {
		return b, fmt.Errorf("broker %s: %w", version, err)
	}

	// Format the storage, creating the SCRAM users in the bootstrap metadata.
	formatArgs := append(jvmArgs(lib, true), "kafka.tools.StorageTool", "format",
		"-t", clusterID(), "-c", propsPath)
	for _, m := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
		u := b.users[m]
		formatArgs = append(formatArgs, "--add-scram", m+"=[name="+u[0]+",password="+u[1]+"]")
	}
	formatLog := filepath.Join(dir, "format.log")
	// The keystore and the storage format are independent JVM runs: they run side by side.
	t0 := time.Now()
	ksErr := make(chan error, 1)
	go func() { ksErr <- b.makeKeystore(ctx, java, storePass) }()
	out, ferr := runTool(ctx, java, formatArgs, formatLog)
	kerr := <-ksErr
	b.phases = append(b.phases, "keystore+format "+time.Since(t0).Round(time.Millisecond).String())
	if ferr != nil {
		return b, fmt.Errorf("broker %s: formatting storage: %w\n%s", version, ferr, tail(out, 4096))
	}
	if kerr != nil {
		return b, fmt.Errorf("broker %s: %w", version, kerr)
	}

	logFile, err := os.Create(b.logPath)
	if err != nil {
		return b, fmt.Errorf("broker %s: %w", version, err)
	}
	b.logFile = logFile
	args := append(jvmArgs(lib, false), "kafka.Kafka", propsPath)
	if err := b.spawn(java, args); err != nil {
		return b, fmt.Errorf("broker %s: starting java: %w", version, err)
	}
	t1 := time.Now()
	err = b.waitReady(ctx)
	b.phases = append(b.phases, "java to serving "+time.Since(t1).Round(time.Millisecond).String())
	if err != nil {
		early := false
		select {
		case <-b.Done():
			early = true // exited before serving, not killed here
		default:
		}
		b.kill()
		logTail := b.logTail()
		if bytes.Contains(logTail, []byte("Address already in use")) {
			return b, &bindError{fmt.Errorf("broker %s: a port was taken: %w\n--- broker log (tail) ---\n%s", version, err, logTail)}
		}
		err = fmt.Errorf("broker %s: not serving: %w\n--- broker log (tail) ---\n%s%s", version, err, logTail, b.logProblems())
		if early {
			return b, &earlyExitError{err}
		}
		return b, err
	}
	return b, nil
}

// spawn starts the broker process. On Linux the process gets SIGKILL when the thread
// that started it exits, so the goroutine that starts it keeps its thread locked until
// the process has exited (a thread is only ever torn down when a locked goroutine ends).
func (b *Broker) spawn(java string, args []string) error {
	cmd := exec.Command(java, args...)
	cmd.Dir = b.dir
	cmd.Stdout = b.logFile
	cmd.Stderr = b.logFile
	cmd.SysProcAttr = sysProcAttr()
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			runtime.UnlockOSThread()
			return
		}
		b.procMu.Lock()
		b.proc, b.done = cmd.Process, done
		b.procMu.Unlock()
		started <- nil
		err := cmd.Wait()
		b.procMu.Lock()
		b.waitErr = err
		b.procMu.Unlock()
		close(done)
		// The thread stays locked: it exits with this goroutine, after the process.
	}()
	return <-started
}

// waitReady polls the PLAINTEXT listener until the broker answers ApiVersions and
// Metadata lists a broker, the process exits, or ctx ends.
func (b *Broker) waitReady(ctx context.Context) error {
	addr := b.addrs["PLAINTEXT"]
	done := b.Done()
	var last error
	for {
		select {
		case <-done:
			return fmt.Errorf("the broker process exited (%v)", b.exitErr())
		default:
		}
		if last = probe(ctx, addr); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last probe: %v)", ctx.Err(), last)
		case <-done:
			return fmt.Errorf("the broker process exited (%v)", b.exitErr())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (b *Broker) makeKeystore(ctx context.Context, java, pass string) error {
	keytool := filepath.Join(filepath.Dir(java), "keytool")
	if _, err := os.Stat(keytool); err != nil {
		if keytool, err = exec.LookPath("keytool"); err != nil {
			return fmt.Errorf("keytool not found next to %s or on PATH", java)
		}
	}
	store := filepath.Join(b.dir, "broker.p12")
	gen := []string{"-J-XX:TieredStopAtLevel=1", "-genkeypair", "-noprompt", "-alias", "broker",
		"-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
		"-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost",
		"-keystore", store, "-storetype", "PKCS12", "-storepass", pass, "-keypass", pass}
	if out, err := runTool(ctx, keytool, gen, ""); err != nil {
		return fmt.Errorf("keytool -genkeypair: %w\n%s", err, tail(out, 2048))
	}
	export := []string{"-J-XX:TieredStopAtLevel=1", "-exportcert", "-rfc", "-alias", "broker",
		"-keystore", store, "-storetype", "PKCS12", "-storepass", pass}
	out, err := runTool(ctx, keytool, export, "")
	if err != nil {
		return fmt.Errorf("keytool -exportcert: %w\n%s", err, tail(out, 2048))
	}
	var blk *pem.Block
	if i := bytes.Index(out, []byte("-----BEGIN")); i >= 0 {
		blk, _ = pem.Decode(out[i:])
	}
	if blk == nil {
		return fmt.Errorf("keytool -exportcert printed no PEM certificate:\n%s", tail(out, 2048))
	}
	if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
		return fmt.Errorf("the broker certificate: %w", err)
	}
	b.certPEM = pem.EncodeToMemory(blk)
	return os.WriteFile(filepath.Join(b.dir, certFile), b.certPEM, 0o600)
}

// serverProperties writes the broker's configuration. Both releases take the static
// controller.quorum.voters form of a single-node quorum.
func (b *Broker) serverProperties(controller, storePass string, extra map[string]string) []byte {
	p := map[string]string{
		"process.roles":              "broker,controller",
		"node.id":                    "1",
		"controller.quorum.voters":   "1@" + controller,
		"controller.listener.names":  "CONTROLLER",
		"inter.broker.listener.name": "PLAINTEXT",
		"listeners": "PLAINTEXT://" + b.addrs["PLAINTEXT"] + ",SSL://" + b.addrs["SSL"] +
			",SASL_PLAINTEXT://" + b.addrs["SASL_PLAINTEXT"] + ",SASL_SSL://" + b.addrs["SASL_SSL"] +
			",CONTROLLER://" + controller,
		"advertised.listeners": "PLAINTEXT://" + b.addrs["PLAINTEXT"] + ",SSL://" + b.addrs["SSL"] +
			",SASL_PLAINTEXT://" + b.addrs["SASL_PLAINTEXT"] + ",SASL_SSL://" + b.addrs["SASL_SSL"],
		"listener.security.protocol.map":           "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT",
		"log.dirs":                                 filepath.Join(b.dir, "data"),
		"num.partitions":                           "1",
		"default.replication.factor":               "1",
		"offsets.topic.replication.factor":         "1",
		"offsets.topic.num.partitions":             "1",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		"transaction.state.log.num.partitions":     "1",
		"group.initial.rebalance.delay.ms":         "0",
		"num.network.threads":                      "2",
		"num.io.threads":                           "4",
		"ssl.keystore.location":                    filepath.Join(b.dir, "broker.p12"),
		"ssl.keystore.type":                        "PKCS12",
		"ssl.keystore.password":                    storePass,
		"ssl.key.password":                         storePass,
		"sasl.enabled.mechanisms":                  strings.Join(Mechanisms, ","),
	}
	if major(b.version) >= 4 {
		p["share.coordinator.state.topic.replication.factor"] = "1"
		p["share.coordinator.state.topic.min.isr"] = "1"
	}
	p["sasl.enabled.mechanisms"] += "," + OAuthBearer
	plain := b.users["PLAIN"]
	for _, l := range []string{"sasl_plaintext", "sasl_ssl"} {
		p["listener.name."+l+".oauthbearer.sasl.jaas.config"] = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"kwire-broker\";"
		p["listener.name."+l+".oauthbearer.sasl.server.callback.handler.class"] = oauthValidator
		p["listener.name."+l+".oauthbearer.sasl.login.callback.handler.class"] = oauthLogin
		p["listener.name."+l+".plain.sasl.jaas.config"] = "org.apache.kafka.common.security.plain.PlainLoginModule required user_" +
			plain[0] + "=\"" + plain[1] + "\";"
		for _, m := range []string{"scram-sha-256", "scram-sha-512"} {
			p["listener.name."+l+"."+m+".sasl.jaas.config"] = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
		}
	}
	for k, v := range extra {
		p[k] = v
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out bytes.Buffer
	for _, k := range keys {
		out.WriteString(escapeProp(k, true) + "=" + escapeProp(p[k], false) + "\n")
	}
	return out.Bytes()
}

// escapeProp escapes a key or value for a Java properties file.
func escapeProp(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '=' || r == ':' || r == '#' || r == '!':
			if key {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case r == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case r > 0x7e:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Addr returns "127.0.0.1:port" of a listener: "PLAINTEXT", "SSL", "SASL_PLAINTEXT" or
// "SASL_SSL"; "" for another name.
func (b *Broker) Addr(listener string) string { return b.addrs[listener] }

// TLSConfig returns a client configuration that trusts the broker's certificate (valid
// for 127.0.0.1 and localhost). Each call returns a new config.
func (b *Broker) TLSConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b.certPEM)
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// CertPEM returns the broker's certificate in PEM form.
func (b *Broker) CertPEM() []byte { return append([]byte(nil), b.certPEM...) }

// CertFile is the path of a file holding CertPEM, for clients that take a CA file (in
// Dir: Stop removes it).
func (b *Broker) CertFile() string { return filepath.Join(b.dir, certFile) }

// User returns the user and password of a SASL mechanism: "PLAIN", "SCRAM-SHA-256" or
// "SCRAM-SHA-512" (empty strings for another). Passwords are random per broker.
func (b *Broker) User(mechanism string) (user, password string) {
	u := b.users[mechanism]
	return u[0], u[1]
}

// Version returns the Kafka release the broker runs.
func (b *Broker) Version() string { return b.version }

// StartDuration is how long Start took, from its call to the first successful probe
// (including jar lookup, keytool, formatting and the JVM's start).
func (b *Broker) StartDuration() time.Duration { return b.started }

// StartPhases describes where the start time went, e.g. "keystore+format 2.1s, java to
// serving 3.4s".
func (b *Broker) StartPhases() string { return strings.Join(b.phases, ", ") }

// Dir is the broker's temporary directory (configuration, data, broker.log); Stop removes it.
func (b *Broker) Dir() string { return b.dir }

// LogTail returns up to the last 8 KiB of the broker's log.
func (b *Broker) LogTail() string { return string(b.logTail()) }

// LogProblems returns the log lines that report an error (the first 20), or a line saying
// there are none: what made a broker stop is often far above the tail.
func (b *Broker) LogProblems() string { return b.logProblems() }

// ExitError is how the broker process ended (nil while it runs, or after a clean exit):
// "signal: terminated" tells a process stopped from outside from one that gave up.
func (b *Broker) ExitError() error { return b.exitErr() }

// Pid returns the broker's process id (a new one after Resume).
func (b *Broker) Pid() int {
	p, _ := b.process()
	return p.Pid
}

// Done is closed when the broker process has exited. After Resume it is the new
// process's channel.
func (b *Broker) Done() <-chan struct{} {
	_, done := b.process()
	return done
}

func (b *Broker) exitErr() error {
	b.procMu.Lock()
	defer b.procMu.Unlock()
	return b.waitErr
}

// process returns the broker process (nil before it started) and the channel closed
// when it exits, read together.
func (b *Broker) process() (*os.Process, <-chan struct{}) {
	b.procMu.Lock()
	defer b.procMu.Unlock()
	return b.proc, b.done
}

// Halt stops the broker process cleanly (SIGTERM; SIGKILL after 30 s) and keeps its
// directory, ports and data: Resume starts it again as it was.
func (b *Broker) Halt() error {
	p, done := b.process()
	if p == nil {
		return errors.New("broker: not started")
	}
	select {
	case <-done:
		return nil
	default:
	}
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return nil
	case <-time.After(stopTimeout):
		_ = p.Signal(syscall.SIGKILL)
		<-done
		return fmt.Errorf("broker %s: no clean shutdown within %v, killed", b.version, stopTimeout)
	}
}

// Resume starts a halted broker again on the same ports, configuration and log
// directory, and returns once it serves (bound by ctx, 90 s without a deadline). A
// port taken meanwhile by another process makes it fail.
func (b *Broker) Resume(ctx context.Context) error {
	select {
	case <-b.Done():
	default:
		return errors.New("broker: Resume of a running broker")
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}
	args := append(jvmArgs(b.lib, false), "kafka.Kafka", b.propsPath)
	if err := b.spawn(b.java, args); err != nil {
		return fmt.Errorf("broker %s: restarting java: %w", b.version, err)
	}
	if err := b.waitReady(ctx); err != nil {
		b.kill()
		return fmt.Errorf("broker %s: not serving after restart: %w\n--- broker log (tail) ---\n%s", b.version, err, b.logTail())
	}
	return nil
}

// Restart is Halt then Resume: the same broker, stopped cleanly and started again.
func (b *Broker) Restart(ctx context.Context) error {
	if err := b.Halt(); err != nil {
		return err
	}
	return b.Resume(ctx)
}

// Pause stops the broker process with SIGSTOP: its sockets stay open and nothing is
// answered until Continue. Used to test clients against a broker that does not answer.
func (b *Broker) Pause() error {
	if p, _ := b.process(); p != nil {
		if err := p.Signal(sigStop); err != nil {
			return err
		}
		return waitStopped(p.Pid)
	}
	return errors.New("broker: not started")
}

// Continue resumes a paused broker (SIGCONT).
func (b *Broker) Continue() error {
	if p, _ := b.process(); p != nil {
		return p.Signal(sigCont)
	}
	return errors.New("broker: not started")
}

// ReauthLogLine is what the broker's log holds for every re-authentication it begins.
const ReauthLogLine = "Beginning re-authentication"

// LogContains counts the lines of the broker's log (all of it, every run since Start)
// that contain s.
func (b *Broker) LogContains(s string) int {
	data, err := os.ReadFile(b.logPath)
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(line, []byte(s)) {
			n++
		}
	}
	return n
}

// logProblems returns the log's lines that report an error (ERROR, FATAL, an exception),
// at most 20, for a start whose tail shows only the configuration.
func (b *Broker) logProblems() string {
	f, err := os.Open(b.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(io.LimitReader(f, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() && len(out) < 20 {
		if l := sc.Text(); strings.Contains(l, "ERROR") || strings.Contains(l, "FATAL") || strings.Contains(l, "Exception") {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return "\n--- no line of the log reports an error ---"
	}
	return "\n--- lines of the log that report an error ---\n" + strings.Join(out, "\n")
}

func (b *Broker) logTail() []byte {
	data, err := readTail(b.logPath, 8192)
	if err != nil {
		return []byte("(no log: " + err.Error() + ")")
	}
	return data
}

// Kill sends SIGKILL to the broker process and waits for it to exit. The temporary
// directory stays until Stop.
func (b *Broker) Kill() error {
	if p, _ := b.process(); p == nil {
		return errors.New("broker: not started")
	}
	b.kill()
	return nil
}

func (b *Broker) kill() {
	p, done := b.process()
	if p == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	_ = p.Signal(sigCont) // a paused process dies as well, but say so
	_ = p.Signal(syscall.SIGKILL)
	<-done
}

// Stop shuts the broker down cleanly (SIGTERM; SIGKILL after 30 s), waits for the process
// to exit and removes its temporary directory. It is idempotent and safe after Kill.
func (b *Broker) Stop() error {
	b.stopOnce.Do(func() {
		if p, done := b.process(); p != nil {
			select {
			case <-done:
			default:
				_ = p.Signal(sigCont)
				_ = p.Signal(syscall.SIGTERM)
				select {
				case <-done:
				case <-time.After(stopTimeout):
					b.stopErr = fmt.Errorf("broker %s: no clean shutdown within %v, killed\n--- broker log (tail) ---\n%s",
						b.version, stopTimeout, b.logTail())
					b.kill()
				}
			}
		}
		if b.logFile != nil {
			b.logFile.Close()
		}
		if err := os.RemoveAll(b.dir); err != nil && b.stopErr == nil {
			b.stopErr = err
		}
	})
	return b.stopErr
}

func javaPath() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "java")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", &UnavailableError{Reason: "java not found (set JAVA_HOME or put java 17+ on PATH)"}
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p, nil
}

// jvmArgs returns the java arguments before the main class. Tools (the storage format)
// run with the quick-start compiler only.
func jvmArgs(lib string, tool bool) []string {
	args := []string{"-Xms128m", "-Xmx768m", "-Djava.awt.headless=true",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
		"-Dorg.slf4j.simpleLogger.showDateTime=true"}
	if tool {
		args = append(args, "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
	} else {
		// The broker's SASL server logs each authentication and re-authentication at debug
		// level ("Beginning re-authentication: ...", "Authentication complete; session max
		// lifetime ..."): tests read them to see re-authentication from the broker's side.
		args = append(args, "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.security.authenticator.SaslServerAuthenticator=debug")
	}
	return append(args, "-cp", filepath.Join(lib, "*"))
}

// runTool runs a short-lived command, bound by ctx, and returns its combined output
// (also written to logPath when that is set).
func runTool(ctx context.Context, name string, args []string, logPath string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if logPath != "" {
		_ = os.WriteFile(logPath, out, 0o600)
	}
	return out, err
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// clusterID is a random Kafka uuid in its text form. Like Kafka's Uuid.randomUuid it
// never starts with '-', which the storage tool's argument parser would take for an
// option ("argument --cluster-id/-t: expected one argument").
func clusterID() string {
	for {
		var b [16]byte
		_, _ = rand.Read(b[:])
		if id := base64.RawURLEncoding.EncodeToString(b[:]); id[0] != '-' {
			return id
		}
	}
}

func major(version string) int {
	n, _ := strconv.Atoi(strings.SplitN(version, ".", 2)[0])
	return n
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return b
}

func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := st.Size() - n
	if off < 0 {
		off = 0
	}
	data, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return nil, err
	}
	if off > 0 {
		data = tail(data, int(n)-1)
	}
	return data, nil
}

// UnavailableError says that Java, Maven or the jars are missing: the environment
// cannot run a broker (StartT skips on it unless KWIRE_REQUIRE_BROKER=1).
type UnavailableError struct{ Reason string }

// Error says what is missing.
func (e *UnavailableError) Error() string { return "broker unavailable: " + e.Reason }

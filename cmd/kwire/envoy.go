package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/kwire/kwire/conformance/hosts/proxywasm"
)

// errRefused reports that the filter refused a plugin configuration (exit status 1).
var errRefused = errors.New("the filter refused the plugin configuration")

// envoyModuleName is the file make envoy writes (build/kwire-envoy.wasm).
const envoyModuleName = "kwire-envoy.wasm"

const envoyUsage = `kwire envoy runs the proxy-wasm Kafka filter (kwire-envoy.wasm) without Envoy, on a
proxy-wasm host over wazero that follows Envoy's callback order and buffer rules
(conformance/hosts/proxywasm; examples/envoy/README.md says what it emulates).

  kwire envoy check [--wasm FILE] [--log-level L] CONFIG...
      Loads the module with each plugin configuration, as Envoy does when it configures
      the listener, and prints the lines the filter logs and whether proxy_on_configure
      accepted the configuration. Exit status 1 if one was refused.
  kwire envoy proxy --config CONFIG --listen ADDR --upstream ADDR [--wasm FILE] [--log-level L]
      A TCP proxy: each connection to ADDR goes to the upstream broker through the filter.
      The filter's log lines go to stderr as they come; Ctrl-C (or SIGTERM) stops it and
      prints the filter's metrics on stdout.

CONFIG is the plugin configuration: a JSON file (examples/envoy/README.md lists its keys),
or an Envoy YAML file, whose "configuration:" blocks' "value: |" texts are read. "-" is
standard input.

--wasm defaults to kwire-envoy.wasm beside the kwire executable (make kwire and make
envoy put both in build/), else build/kwire-envoy.wasm under the working directory.
--log-level is the least level printed: trace, debug, info (the default, as Envoy's),
warn, error or critical.
`

func cmdEnvoy(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, envoyUsage)
		return &usageError{"envoy needs check or proxy"}
	}
	switch args[0] {
	case "check":
		return envoyCheck(args[1:], stdin, stdout, stderr)
	case "proxy":
		return envoyProxy(args[1:], stdin, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, envoyUsage)
		return nil
	}
	return &usageError{fmt.Sprintf("envoy: unknown command %q (check or proxy)", args[0])}
}

// envoyFlags are the flags both envoy commands take.
type envoyFlags struct {
	wasm     *string
	logLevel *string
}

func addEnvoyFlags(name string, stderr io.Writer) (*flag.FlagSet, envoyFlags) {
	fs := newFlags("envoy "+name, stderr)
	fs.Usage = func() { fmt.Fprint(stderr, envoyUsage) }
	return fs, envoyFlags{
		wasm:     fs.String("wasm", "", "the filter module (default: "+envoyModuleName+" beside kwire, else build/"+envoyModuleName+")"),
		logLevel: fs.String("log-level", "info", "least log level printed: trace, debug, info, warn, error, critical"),
	}
}

// load reads the flags' log level and module.
func (ef envoyFlags) load() (least int32, mod *envoyModule, err error) {
	if least, err = parseLevel(*ef.logLevel); err != nil {
		return 0, nil, err
	}
	mod, err = findModule(*ef.wasm)
	return least, mod, err
}

// logLevels are proxy-wasm's log levels (proxy_log_level_t), by number.
var logLevels = []string{"trace", "debug", "info", "warn", "error", "critical"}

func levelName(l int32) string {
	if l >= 0 && int(l) < len(logLevels) {
		return logLevels[l]
	}
	return "level" + strconv.Itoa(int(l))
}

func parseLevel(s string) (int32, error) {
	if i := slices.Index(logLevels, strings.ToLower(s)); i >= 0 {
		return int32(i), nil
	}
	return 0, &usageError{fmt.Sprintf("--log-level %q: want one of %s", s, strings.Join(logLevels, ", "))}
}

// envoyModule is the filter module a command runs.
type envoyModule struct {
	path    string
	code    []byte
	version string // the .version file make envoy writes beside it, if there
}

// findModule reads the module: --wasm, else kwire-envoy.wasm beside the executable,
// else build/kwire-envoy.wasm under the working directory.
func findModule(flagValue string) (*envoyModule, error) {
	candidates := []string{flagValue}
	if flagValue == "" {
		candidates = nil
		if exe, err := os.Executable(); err == nil {
			if r, err := filepath.EvalSymlinks(exe); err == nil {
				exe = r
			}
			candidates = append(candidates, filepath.Join(filepath.Dir(exe), envoyModuleName))
		}
		candidates = append(candidates, filepath.Join("build", envoyModuleName))
	}
	for _, c := range candidates {
		code, err := os.ReadFile(c)
		if err != nil {
			if flagValue != "" || !errors.Is(err, os.ErrNotExist) {
				return nil, &inputError{err}
			}
			continue
		}
		m := &envoyModule{path: c, code: code}
		if v, err := os.ReadFile(c + ".version"); err == nil {
			m.version = strings.TrimSpace(string(v))
		}
		return m, nil
	}
	return nil, &inputError{fmt.Errorf("no filter module: none of %s exists; give --wasm FILE (make envoy builds build/%s)",
		strings.Join(candidates, ", "), envoyModuleName)}
}

// describe is the module's one-line description: path, size, SHA-256, version.
func (m *envoyModule) describe() string {
	sum := sha256.Sum256(m.code)
	s := fmt.Sprintf("%s (%d bytes, sha256 %s", m.path, len(m.code), hex.EncodeToString(sum[:]))
	if m.version != "" {
		s += ", " + m.version
	}
	return s + ")"
}

// compilationCache keeps wazero's compiled code of the module between runs, in the
// user's cache directory (nil, and so no cache, where there is none).
func compilationCache() wazero.CompilationCache {
	dir, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	c, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "kwire", "wazero"))
	if err != nil {
		return nil
	}
	return c
}

// pluginConfig is one plugin configuration to run, and where it was read.
type pluginConfig struct {
	where string
	data  []byte
}

// readPluginConfigs reads CONFIG: a JSON file is one configuration; a YAML file gives
// the "value: |" block of every "configuration:" key.
func readPluginConfigs(name string, stdin io.Reader) ([]pluginConfig, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(stdin)
		name = "standard input"
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, &inputError{err}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] == '{' {
		return []pluginConfig{{where: name, data: data}}, nil
	}
	cfgs := yamlPluginConfigs(name, data)
	if len(cfgs) == 0 {
		return nil, &inputError{fmt.Errorf("%s: not a JSON object, and no \"configuration:\" block with a \"value: |\" text in it", name)}
	}
	return cfgs, nil
}

// yamlPluginConfigs finds, in an Envoy YAML file, the block scalar ("value: |") under
// each "configuration:" key, as envoy.yaml writes the plugin configuration. It reads
// indentation only: enough for Envoy's configuration files, not a YAML parser.
func yamlPluginConfigs(name string, data []byte) []pluginConfig {
	lines := strings.Split(string(data), "\n")
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	var out []pluginConfig
	cfgIndent := -1 // indentation of the "configuration:" key being read, -1 outside one
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		text := strings.TrimSpace(line)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		n := indent(line)
		if cfgIndent >= 0 && n <= cfgIndent {
			cfgIndent = -1
		}
		if text == "configuration:" || strings.HasPrefix(text, "configuration: #") {
			cfgIndent = n
			continue
		}
		if cfgIndent < 0 {
			continue
		}
		v, ok := strings.CutPrefix(text, "value:")
		if v = strings.TrimSpace(v); !ok || (v != "|" && v != "|-" && v != "|+") {
			continue
		}
		var block []string
		blockIndent := -1
		j := i + 1
		for ; j < len(lines); j++ {
			l := strings.TrimRight(lines[j], "\r")
			if strings.TrimSpace(l) == "" {
				block = append(block, "")
				continue
			}
			if blockIndent < 0 {
				blockIndent = indent(l)
			}
			if indent(l) < blockIndent || blockIndent <= n {
				break
			}
			block = append(block, l[blockIndent:])
		}
		out = append(out, pluginConfig{where: name + ":" + strconv.Itoa(i+1), data: []byte(strings.Join(block, "\n"))})
		i = j - 1
	}
	return out
}

func envoyCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, ef := addEnvoyFlags("check", stderr)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &usageError{"envoy check needs a plugin configuration file (CONFIG)"}
	}
	least, mod, err := ef.load()
	if err != nil {
		return err
	}
	var cfgs []pluginConfig
	for _, name := range pos {
		c, err := readPluginConfigs(name, stdin)
		if err != nil {
			return err
		}
		cfgs = append(cfgs, c...)
	}
	fmt.Fprintf(stdout, "kwire envoy check: module %s\n", mod.describe())
	cache := compilationCache()
	ctx := context.Background()
	refused := 0
	for _, c := range cfgs {
		var logs []proxywasm.LogEntry
		p, err := proxywasm.NewPlugin(ctx, proxywasm.Config{Module: mod.code, PluginConfiguration: c.data,
			LogLevel: least, Cache: cache, OnLog: func(e proxywasm.LogEntry) { logs = append(logs, e) }})
		for _, e := range logs {
			if e.Level >= least {
				fmt.Fprintf(stdout, "%s: %s %s\n", c.where, levelName(e.Level), e.Message)
			}
		}
		switch {
		case err == nil:
			p.Close()
			fmt.Fprintf(stdout, "%s: accepted\n", c.where)
		case errors.Is(err, proxywasm.ErrConfigureRefused):
			refused++
			fmt.Fprintf(stdout, "%s: refused by proxy_on_configure: Envoy would refuse the listener\n", c.where)
		case errors.Is(err, proxywasm.ErrVMStartRefused):
			refused++
			fmt.Fprintf(stdout, "%s: refused by proxy_on_vm_start: Envoy would not start the VM\n", c.where)
		default:
			return &inputError{fmt.Errorf("%s: the module does not load: %w", mod.path, err)}
		}
	}
	if refused > 0 {
		return fmt.Errorf("%w (%d of %d)", errRefused, refused, len(cfgs))
	}
	return nil
}

// syncWriter serialises the log lines the filter writes from its connections.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, format, args...)
}

func envoyProxy(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, ef := addEnvoyFlags("proxy", stderr)
	config := fs.String("config", "", "the plugin configuration (JSON, or Envoy YAML with one configuration block)")
	listen := fs.String("listen", "", "address to accept clients on, e.g. 127.0.0.1:19092")
	upstream := fs.String("upstream", "", "the broker to forward to, e.g. 127.0.0.1:9092")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *config == "" || *listen == "" || *upstream == "" {
		return &usageError{"envoy proxy needs --config CONFIG, --listen ADDR and --upstream ADDR"}
	}
	least, mod, err := ef.load()
	if err != nil {
		return err
	}
	cfgs, err := readPluginConfigs(*config, stdin)
	if err != nil {
		return err
	}
	if len(cfgs) != 1 {
		return &inputError{fmt.Errorf("%s holds %d plugin configurations; give a file with one", *config, len(cfgs))}
	}
	logw := &syncWriter{w: stderr}
	p, err := proxywasm.NewPlugin(context.Background(), proxywasm.Config{Module: mod.code, PluginConfiguration: cfgs[0].data,
		LogLevel: least, Cache: compilationCache(), OnLog: func(e proxywasm.LogEntry) {
			if e.Level >= least {
				logw.printf("%s %s\n", levelName(e.Level), e.Message)
			}
		}})
	if err != nil {
		if errors.Is(err, proxywasm.ErrConfigureRefused) || errors.Is(err, proxywasm.ErrVMStartRefused) {
			return fmt.Errorf("%s: %w", cfgs[0].where, errRefused)
		}
		return &inputError{fmt.Errorf("%s: the module does not load: %w", mod.path, err)}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		p.Close()
		return &netError{err}
	}
	// The harness dials the upstream for each connection and closes the client's when
	// that fails, silently: say now if it cannot be reached.
	if c, err := net.DialTimeout("tcp", *upstream, 5*time.Second); err != nil {
		logw.printf("kwire envoy proxy: warning: the upstream %s cannot be reached now: %v\n", *upstream, err)
	} else {
		c.Close()
	}
	x := proxywasm.NewProxyOn(ln, p, *upstream, nil)
	logw.printf("kwire envoy proxy: listening on %s, forwarding to %s through %s; Ctrl-C stops it and prints the metrics\n",
		x.Addr(), *upstream, mod.describe())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	s := <-sig
	logw.printf("kwire envoy proxy: %v: stopping\n", s)
	x.Close()
	p.Tick() // the filter sends what its counters hold on a tick
	printMetrics(stdout, p.Metrics())
	logw.printf("kwire envoy proxy: %d callbacks into the module, %v in them; names as the module defines them (Envoy's /stats shows them under wasmcustom.)\n",
		p.Callbacks(), p.VMTime().Round(time.Microsecond))
	if n := x.VMErrors(); n > 0 {
		logw.printf("kwire envoy proxy: %d connections closed because a call into the module failed\n", n)
	}
	broken := p.Broken()
	p.Close()
	if broken != nil {
		return fmt.Errorf("the module's VM failed: %w", broken)
	}
	return nil
}

// printMetrics writes one line per metric, sorted by name, as Envoy's /stats text does:
// "name: value", and for a histogram its count, p50, p99 and max.
func printMetrics(w io.Writer, ms []proxywasm.Metric) {
	for _, m := range ms {
		if m.Type != proxywasm.Histogram {
			fmt.Fprintf(w, "%s: %d\n", m.Name, m.Value)
			continue
		}
		if len(m.Samples) == 0 {
			fmt.Fprintf(w, "%s: no recorded values\n", m.Name)
			continue
		}
		s := slices.Clone(m.Samples)
		slices.Sort(s)
		q := func(f float64) uint64 { return s[min(len(s)-1, int(f*float64(len(s))))] }
		fmt.Fprintf(w, "%s: count %d, p50 %d, p99 %d, max %d\n", m.Name, len(s), q(0.5), q(0.99), s[len(s)-1])
	}
}

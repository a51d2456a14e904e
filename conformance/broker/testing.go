package broker

import (
	"context"
	"errors"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// RequireEnv is the environment variable that turns a missing Java, Maven or jar set
// from a skipped test into a failed one.
const RequireEnv = "KWIRE_REQUIRE_BROKER"

// StartT starts a broker for a test and registers t.Cleanup(Stop). When Java or the jars
// are unavailable it skips the test with the reason, unless KWIRE_REQUIRE_BROKER=1, in
// which case the test fails. Any other start failure fails the test.
func StartT(t testing.TB, opts Options) *Broker {
	t.Helper()
	b, err := Start(context.Background(), opts)
	if err != nil {
		unavailable(t, err)
		return nil
	}
	t.Cleanup(func() {
		if err := b.Stop(); err != nil {
			t.Errorf("stopping broker: %v", err)
		}
	})
	t.Logf("broker %s started in %v (%s; PLAINTEXT %s)", b.Version(), b.StartDuration().Round(1e6), b.StartPhases(), b.Addr("PLAINTEXT"))
	return b
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	var ue *UnavailableError
	if errors.As(err, &ue) && os.Getenv(RequireEnv) != "1" {
		t.Skipf("no Kafka broker: %v (set %s=1 to fail instead)", err, RequireEnv)
	}
	t.Fatalf("no Kafka broker: %v", err)
}

type shared struct {
	once sync.Once
	b    *Broker
	err  error
}

var (
	sharedMu sync.Mutex
	shareds  = map[string]*shared{}
)

// SharedT returns a broker shared by every test of the process that asks for the same
// options, starting it on first use (skipping or failing as StartT does). Tests must not
// stop or kill a shared broker; the package's TestMain calls StopShared after m.Run.
func SharedT(t testing.TB, opts Options) *Broker {
	t.Helper()
	key := optionsKey(opts)
	sharedMu.Lock()
	s := shareds[key]
	if s == nil {
		s = &shared{}
		shareds[key] = s
	}
	sharedMu.Unlock()
	s.once.Do(func() {
		s.b, s.err = Start(context.Background(), opts)
		if s.err == nil {
			t.Logf("shared broker %s started in %v (%s; PLAINTEXT %s)", s.b.Version(), s.b.StartDuration().Round(1e6), s.b.StartPhases(), s.b.Addr("PLAINTEXT"))
		}
	})
	if s.err != nil {
		unavailable(t, s.err)
		return nil
	}
	return s.b
}

// StopShared stops every broker SharedT started and returns the first error.
func StopShared() error {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	var first error
	for k, s := range shareds {
		if s.b != nil {
			if err := s.b.Stop(); err != nil && first == nil {
				first = err
			}
		}
		delete(shareds, k)
	}
	return first
}

func optionsKey(o Options) string {
	v := o.Version
	if v == "" {
		v = DefaultVersion
	}
	keys := make([]string, 0, len(o.Props))
	for k := range o.Props {
		keys = append(keys, k+"="+o.Props[k])
	}
	sort.Strings(keys)
	return v + "\x00" + strings.Join(keys, "\x00")
}

// Package zkproc starts and stops real ZooKeeper ensembles for the tests that hold the
// simulated ensemble and the Curator recipe to ZooKeeper 3.8 and Curator 5.4: Debian's
// zookeeper jars under its JDK, every server on loopback ports of its own, configured from
// a folder the caller gives (zoo.cfg and myid written there, nothing read from /etc), and
// killed by Close; on Linux a server is also killed if the process that started it dies
// first. A test reaches the servers' state through ZooKeeper's four-letter words (srvr,
// mntr), which the written zoo.cfg allows.
package zkproc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// InstallHint says how to get ZooKeeper, Curator and a JDK on the machines the project
// targets (Debian 12: ZooKeeper 3.8.0, Curator 5.4.0, OpenJDK 17).
const InstallHint = "install them with `apt-get install -y zookeeper libcurator-recipes-java default-jdk-headless`"

// ErrNotInstalled is wrapped by the error of Java (and of Start) when java, javac or one
// of the Debian jars is missing.
var ErrNotInstalled = errors.New("ZooKeeper, Curator or a JDK not installed")

// The Debian jars. Each one's manifest names the jars it needs (Curator's name ZooKeeper's,
// ZooKeeper's name Netty, SLF4J's API and Jute), so these are the whole class path.
const (
	// ZooKeeperJar is Debian's libzookeeper-java: the server and the client.
	ZooKeeperJar = "/usr/share/java/zookeeper.jar"
	// CuratorJar is Debian's libcurator-recipes-java: InterProcessMutex, with Curator's
	// framework and client through its manifest.
	CuratorJar = "/usr/share/java/curator-recipes.jar"
	// LoggerJar is SLF4J's simple logger (Debian's libslf4j-java, which ZooKeeper
	// depends on): the servers log to a file of their own, read on a failure.
	LoggerJar = "/usr/share/java/slf4j-simple.jar"
)

const (
	startAttempts = 3 // a free port can be taken between probe and bind
	// leaderTimeout bounds the wait for an elected leader at start. An election on
	// loopback takes well under a second; the bound only catches an ensemble that never
	// forms, so it is generous enough that a machine loaded by other work never reaches it.
	leaderTimeout = time.Minute
)

// Java returns the java executable, once it checked that javac and the jars are there
// too; the error wraps ErrNotInstalled and says how to install them.
func Java() (string, error) {
	java, err := exec.LookPath("java")
	if err == nil {
		_, err = exec.LookPath("javac")
	}
	for _, jar := range []string{ZooKeeperJar, CuratorJar, LoggerJar} {
		if err == nil {
			_, err = os.Stat(jar)
		}
	}
	if err != nil {
		return "", fmt.Errorf("%w (%v); %s", ErrNotInstalled, err, InstallHint)
	}
	return java, nil
}

// JVMFlags returns the flags every JVM of a test starts with: a small heap and the serial
// collector (several JVMs share a small machine), and quick start-up over peak speed.
func JVMFlags() []string {
	return []string{"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k"}
}

// Config is an ensemble's shape and ZooKeeper's timing settings.
type Config struct {
	// Servers is the number of servers (3 or 5 make sense; 1 runs standalone).
	Servers int
	// Tick is ZooKeeper's tickTime: the unit of its timeouts and the session expiry's
	// bucket. Sessions are clamped to [2, 20] ticks.
	Tick time.Duration
	// InitLimit and SyncLimit are in ticks: how long a follower may take to connect and
	// sync to a new leader, and how far behind it may fall before the leader drops it.
	InitLimit, SyncLimit int
}

// Ensemble is a running set of servers started by Start.
type Ensemble struct {
	cfg     Config
	servers []*Server
}

// Server is one ZooKeeper server process of an Ensemble.
type Server struct {
	id                                   int // ZooKeeper's myid, 1-based
	dir, java                            string
	clientPort, quorumPort, electionPort int

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit *exitStatus // of the current process
}

// exitStatus is how one process ended: err is cmd.Wait's error, readable once done is
// closed.
type exitStatus struct {
	done chan struct{}
	err  error
}

// Start writes each server's zoo.cfg and myid under dir (which must exist), starts the
// servers, and waits until every one of them serves: one leader, the others its
// followers. The caller must Close the ensemble.
func Start(dir string, cfg Config) (*Ensemble, error) {
	java, err := Java()
	if err != nil {
		return nil, err
	}
	if cfg.Servers < 1 || cfg.Tick <= 0 || cfg.InitLimit < 1 || cfg.SyncLimit < 1 {
		return nil, fmt.Errorf("zkproc: config %+v: servers, tick, initLimit and syncLimit must be positive", cfg)
	}
	for attempt := range startAttempts {
		e := &Ensemble{cfg: cfg}
		if err = e.launchAll(filepath.Join(dir, "try"+strconv.Itoa(attempt)), java); err == nil {
			if err = e.WaitServing(leaderTimeout); err == nil {
				return e, nil
			}
		}
		e.Close()
	}
	return nil, fmt.Errorf("zkproc: starting a %d-server ensemble: %w", cfg.Servers, err)
}

func (e *Ensemble) launchAll(dir string, java string) error {
	ports, err := freePorts(3 * e.cfg.Servers)
	if err != nil {
		return err
	}
	for i := range e.cfg.Servers {
		e.servers = append(e.servers, &Server{id: i + 1, dir: filepath.Join(dir, strconv.Itoa(i+1)), java: java,
			clientPort: ports[3*i], quorumPort: ports[3*i+1], electionPort: ports[3*i+2]})
	}
	for _, s := range e.servers {
		if err := e.writeConfig(s); err != nil {
			return err
		}
	}
	for _, s := range e.servers {
		if err := s.launch(); err != nil {
			return err
		}
	}
	return nil
}

// writeConfig writes s's zoo.cfg and its dataDir's myid. The ensemble is static (no
// reconfig), the admin HTTP server is off (it would take port 8080 on every server), and
// srvr, mntr, stat, cons and dump are allowed for the tests.
func (e *Ensemble) writeConfig(s *Server) error {
	data := filepath.Join(s.dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(s.id)+"\n"), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\ninitLimit=%d\nsyncLimit=%d\n", e.cfg.Tick.Milliseconds(), e.cfg.InitLimit, e.cfg.SyncLimit)
	fmt.Fprintf(&b, "dataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n", data, s.clientPort)
	b.WriteString("4lw.commands.whitelist=srvr,mntr,stat,cons,dump,ruok\nadmin.enableServer=false\n")
	b.WriteString("reconfigEnabled=false\nstandaloneEnabled=true\n")
	if len(e.servers) > 1 {
		for _, o := range e.servers {
			fmt.Fprintf(&b, "server.%d=127.0.0.1:%d:%d\n", o.id, o.quorumPort, o.electionPort)
		}
	}
	return os.WriteFile(filepath.Join(s.dir, "zoo.cfg"), []byte(b.String()), 0o644)
}

// Servers returns the servers, in myid order (index i is myid i+1).
func (e *Ensemble) Servers() []*Server { return e.servers }

// Tick returns the ensemble's tickTime.
func (e *Ensemble) Tick() time.Duration { return e.cfg.Tick }

// ConnectString returns the client connect string, every server's host:port.
func (e *Ensemble) ConnectString() string {
	addrs := make([]string, len(e.servers))
	for i, s := range e.servers {
		addrs[i] = s.Addr()
	}
	return strings.Join(addrs, ",")
}

// Close kills every server (SIGKILL to all before waiting for any). Closing twice is
// harmless.
func (e *Ensemble) Close() {
	for _, s := range e.servers {
		_ = s.signal(syscall.SIGKILL)
	}
	for _, s := range e.servers {
		s.Kill()
	}
}

// Modes asks every server `srvr` and returns each one's mode ("leader", "follower",
// "standalone"), or "" for a server that is down, paused, or not serving (electing).
func (e *Ensemble) Modes() []string {
	modes := make([]string, len(e.servers))
	for i, s := range e.servers {
		modes[i], _ = s.Mode()
	}
	return modes
}

// Leader returns the index of the server that is leader with a quorum of the ensemble
// serving (itself and its followers), or -1 when there is none just now.
func (e *Ensemble) Leader() int {
	leader, serving := -1, 0
	for i, m := range e.Modes() {
		switch m {
		case "leader", "standalone":
			if leader >= 0 {
				return -1 // two leaders answer only across an epoch change: ask again
			}
			leader = i
			serving++
		case "follower":
			serving++
		}
	}
	if leader < 0 || serving <= len(e.servers)/2 {
		return -1
	}
	return leader
}

// WaitLeader polls Leader until it names one, for at most timeout, and returns it.
func (e *Ensemble) WaitLeader(timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		if l := e.Leader(); l >= 0 {
			return l, nil
		}
		for _, s := range e.servers {
			if exited, how := s.Exited(); exited && s.launched() && !s.killedByUs() {
				return -1, fmt.Errorf("server %d exited (%s): %s", s.id, how, s.LogTail(4000))
			}
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("no leader with a quorum after %v (modes %q)", timeout, e.Modes())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitServing polls the servers until every live one serves (one leader, the others
// following it), for at most timeout: a server that rejoins syncs with the leader first.
func (e *Ensemble) WaitServing(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		leader, err := e.WaitLeader(time.Until(deadline))
		if err != nil {
			return err
		}
		modes, serving, live := e.Modes(), 0, 0
		for i, s := range e.servers {
			if s.Alive() {
				live++
				if modes[i] == "follower" || i == leader {
					serving++
				}
			}
		}
		if serving == live {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not every server serves after %v (modes %q)", timeout, modes)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ID returns the server's myid (its index in Servers plus one).
func (s *Server) ID() int { return s.id }

// Addr returns the client address, host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.clientPort)) }

// ClientPort returns the client TCP port.
func (s *Server) ClientPort() int { return s.clientPort }

// Dir returns the server's folder: zoo.cfg, server.log, and data/ (myid, the
// transaction log and snapshots).
func (s *Server) Dir() string { return s.dir }

// Pid returns the server process's id, 0 when it is not running.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Mode asks the server `srvr` and returns its mode ("leader", "follower", "standalone"),
// or an error when it does not answer or is not serving.
func (s *Server) Mode() (string, error) {
	out, err := FourLetter(s.Addr(), "srvr")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("server %d: %s", s.id, strings.TrimSpace(out))
}

// Kill sends SIGKILL, as a crash would, and waits for the process to exit (a paused
// server too). What the server synced to its transaction log survives. Killing twice is
// harmless.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exit := s.cmd, s.exit
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exit.done
}

// Restart starts a killed server again with the same configuration and data folder, as
// a machine that rebooted: it rejoins the ensemble from its transaction log.
func (s *Server) Restart() error {
	s.Kill()
	return s.launch()
}

// Exited reports whether the current process has ended, and how ("signal: killed", "exit
// status 1").
func (s *Server) Exited() (bool, string) {
	s.mu.Lock()
	exit := s.exit
	s.mu.Unlock()
	if exit == nil {
		return false, ""
	}
	select {
	case <-exit.done:
		if exit.err != nil {
			return true, exit.err.Error()
		}
		return true, "exited"
	default:
		return false, ""
	}
}

// Alive reports whether the server's process is running (paused or not).
func (s *Server) Alive() bool {
	exited, _ := s.Exited()
	return s.launched() && !exited
}

func (s *Server) launched() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// killedByUs reports whether the current process died of SIGKILL (Kill, Close), as
// opposed to exiting on its own.
func (s *Server) killedByUs() bool {
	_, how := s.Exited()
	return strings.Contains(how, "killed")
}

// LogTail returns the last n bytes of what the server logged (all its runs), for a
// failure's message.
func (s *Server) LogTail(n int64) string {
	f, err := os.Open(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return errors.New("zookeeper server not started")
	}
	return cmd.Process.Signal(sig)
}

// launch starts the server's JVM: QuorumPeerMain on its zoo.cfg (ZooKeeper runs a
// one-server ensemble standalone from the same class). It does not wait: the ensemble's
// readiness is a leader with a quorum (WaitLeader).
func (s *Server) launch() error {
	args := append(JVMFlags(),
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.jmx.log4j.disable=true",
		"-Dorg.slf4j.simpleLogger.logFile="+filepath.Join(s.dir, "server.log"),
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
		"-cp", ZooKeeperJar+string(os.PathListSeparator)+LoggerJar,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(s.dir, "zoo.cfg"))
	cmd := exec.Command(s.java, args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = sysProcAttr()
	out, err := os.OpenFile(filepath.Join(s.dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return err
	}
	exit := &exitStatus{done: make(chan struct{})}
	go func() {
		exit.err = cmd.Wait()
		out.Close()
		close(exit.done)
	}()
	s.mu.Lock()
	s.cmd, s.exit = cmd, exit
	s.mu.Unlock()
	return nil
}

// FourLetter sends one of ZooKeeper's four-letter words to addr and returns the answer.
func FourLetter(addr, word string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	var b strings.Builder
	_, err = io.Copy(&b, bufio.NewReader(c))
	if err != nil && b.Len() == 0 {
		return "", err
	}
	return b.String(), nil
}

// freePorts asks the kernel for n distinct free loopback ports, holding each open until
// all are chosen. Another process may take one before a server binds it; Start retries
// then.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Command is exec.Command with the servers' process attributes: on Linux the process is
// killed if the caller dies first. The tests start their client JVMs with it.
func Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = sysProcAttr()
	return cmd
}

// ServerOf returns the index of the server a session is connected to, asking every
// server `cons` (which lists its connections with their session ids), or -1 when none
// has it. session is ZooKeeper's session id in hex, "0x" and all, as clients print it.
func (e *Ensemble) ServerOf(session string) int {
	for i, s := range e.servers {
		out, err := FourLetter(s.Addr(), "cons")
		if err == nil && strings.Contains(out, "sid="+session+",") {
			return i
		}
	}
	return -1
}

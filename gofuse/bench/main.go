// SPDX-License-Identifier: GPL-2.0

// gofuse_bench: a go-fuse daemon and a load generator in one process, the
// go-fuse counterpart of rig/tests/fuse_bench.c, with the same output.
//
//	gofuse_bench MODE WORKLOAD THREADS OPS
//	  MODE:     single   go-fuse as it is: the mount fd, its reader
//	                     goroutines wherever the runtime runs them
//	            unbound  MountOptions.CloneBind "unbound": a clone per CPU,
//	                     its readers on a locked thread pinned there
//	            node     CloneBind "node": a clone per node, bound to it
//	            cpu      CloneBind "cpu": a clone per CPU, bound to it
//	  WORKLOAD: getattr  fstat() of an open file (GETATTR, attr timeout 0)
//	            read     4 KiB pread() of a direct-io file (READ)
//	  THREADS:  load threads, thread i on a locked OS thread pinned to CPU
//	            i % CPUs; 0 is one per CPU, -K is K per CPU
//	  OPS:      operations per thread
//
// With FUSE_BENCH_MARK=1, syncfs(2) on / just before the load starts and
// just after it ends (the marks of make bench-lines). Prints one
// tab-separated line, as fuse_bench does:
//
//	mode workload threads ops secs ops_per_s p50_us p99_us
//	local_cpu_pct local_node_pct ctxsw_per_req ipi_per_req requests
//
// where mode is "go-MODE" and the local shares count the requests whose
// issuing thread is one of the load threads (by the pid in their header),
// read on the CPU (node) it runs on. The reader's CPU and node are those
// RDTSCP reports (IA32_TSC_AUX, which Linux sets to (node << 12) | cpu).
//
// The load runs in a child process (the same binary, "-load"), so that
// its threads, locked to OS threads and pinned, do not share the
// daemon's Go runtime (its Ps) as no caller of a real daemon does. The
// child says which thread runs on which CPU, waits for a byte on its
// stdin, runs, and prints its count, time and latencies.
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

const (
	maxTid  = 65536
	maxCPUs = 1024
	mnt     = "/tmp/gobench"
)

func tscAux() uint32

// The CPU and node of each load thread, by tid (cpu+1; 0: not one)
var tidCPU [maxTid]int32
var tidNode [maxTid]int32

// Counts by the reader's CPU, a cacheline each
type cpuStat struct {
	reqs, known, localCPU, localNode uint64
	_                                [4]uint64
}

var stats [maxCPUs]cpuStat

type benchFS struct {
	fuse.RawFileSystem
	nfiles int
	data   []byte
}

func (fs *benchFS) count(h *fuse.InHeader) {
	aux := tscAux()
	me, node := int(aux&0xfff), int32(aux>>12)
	st := &stats[me%maxCPUs]
	atomic.AddUint64(&st.reqs, 1)
	from := tidCPU[h.Pid%maxTid] - 1
	if from < 0 {
		return
	}
	atomic.AddUint64(&st.known, 1)
	if int(from) == me {
		atomic.AddUint64(&st.localCPU, 1)
	}
	if tidNode[h.Pid%maxTid] == node {
		atomic.AddUint64(&st.localNode, 1)
	}
}

func (fs *benchFS) attr(ino uint64, a *fuse.Attr) {
	a.Ino = ino
	a.Nlink = 1
	if ino == fuse.FUSE_ROOT_ID {
		a.Mode = syscall.S_IFDIR | 0755
		a.Nlink = 2
		return
	}
	a.Mode = syscall.S_IFREG | 0644
	a.Size = uint64(len(fs.data))
}

func (fs *benchFS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	fs.count(h)
	if h.NodeId != fuse.FUSE_ROOT_ID || !strings.HasPrefix(name, "b") {
		return fuse.ENOENT
	}
	i, err := strconv.Atoi(name[1:])
	if err != nil || i < 0 || i >= fs.nfiles {
		return fuse.ENOENT
	}
	out.NodeId = uint64(i) + 2
	out.SetEntryTimeout(time.Hour)
	out.SetAttrTimeout(0)
	fs.attr(out.NodeId, &out.Attr)
	return fuse.OK
}

func (fs *benchFS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	fs.count(&in.InHeader)
	out.SetTimeout(0)
	fs.attr(in.NodeId, &out.Attr)
	return fuse.OK
}

func (fs *benchFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	fs.count(&in.InHeader)
	out.OpenFlags = fuse.FOPEN_DIRECT_IO
	return fuse.OK
}

func (fs *benchFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	fs.count(&in.InHeader)
	n := int(in.Size)
	if in.Offset >= uint64(len(fs.data)) {
		n = 0
	} else if n > len(fs.data)-int(in.Offset) {
		n = len(fs.data) - int(in.Offset)
	}
	return fuse.ReadResultData(fs.data[in.Offset : int(in.Offset)+n]), fuse.OK
}

func (fs *benchFS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {}

func (fs *benchFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status { return fuse.OK }

func (fs *benchFS) String() string { return "gofuse_bench" }

func pin(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}

// The CPUs this process may run on
func onlineCPUs() []int {
	var set unix.CPUSet
	var cpus []int
	if unix.SchedGetaffinity(0, &set) != nil {
		return []int{0}
	}
	for c := 0; c < maxCPUs; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

func procStatCtxt() uint64 {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v := s.Text(); strings.HasPrefix(v, "ctxt ") {
			n, _ := strconv.ParseUint(v[5:], 10, 64)
			return n
		}
	}
	return 0
}

// Rescheduling and function-call IPIs, summed over CPUs
func procIPIs() uint64 {
	f, err := os.Open("/proc/interrupts")
	if err != nil {
		return 0
	}
	defer f.Close()
	var sum uint64
	s := bufio.NewScanner(f)
	for s.Scan() {
		p := strings.Fields(s.Text())
		if len(p) == 0 || (p[0] != "RES:" && p[0] != "CAL:") {
			continue
		}
		for _, v := range p[1:] {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				break
			}
			sum += n
		}
	}
	return sum
}

// FUSE_BENCH_MARK=1: a mark for a TCG plugin
func mark() {
	if os.Getenv("FUSE_BENCH_MARK") != "1" {
		return
	}
	fd, err := unix.Open("/", unix.O_RDONLY, 0)
	if err == nil {
		err = unix.Syncfs(fd)
		unix.Close(fd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FUSE_BENCH_MARK: syncfs /:", err)
	}
}

type worker struct {
	cpu  int
	tid  int
	node int
	ops  int
	lat  []float64
	busy time.Duration
	err  error
}

func (w *worker) run(workload string, ready, start *sync.WaitGroup, done *sync.WaitGroup) {
	defer done.Done()
	// The load thread stays on its CPU: it never unlocks, so its
	// thread ends with it
	runtime.LockOSThread()
	if err := pin(w.cpu); err != nil {
		w.err = err
	}
	w.tid, w.node = unix.Gettid(), int(tscAux()>>12)
	path := fmt.Sprintf("%s/b%d", mnt, w.cpu)
	fd, err := unix.Open(path, unix.O_RDONLY, 0)
	if err != nil && w.err == nil {
		w.err = err
	}
	ready.Done()
	start.Wait()
	var st unix.Stat_t
	buf := make([]byte, 4096)
	t0 := time.Now()
	for i := 0; w.err == nil && i < w.ops; i++ {
		t := time.Now()
		if workload == "getattr" {
			err = unix.Fstat(fd, &st)
		} else {
			var n int
			n, err = unix.Pread(fd, buf, 0)
			if err == nil && n != len(buf) {
				err = fmt.Errorf("short read: %d", n)
			}
		}
		if err != nil {
			w.err = err
			break
		}
		w.lat = append(w.lat, float64(time.Since(t).Nanoseconds())/1e3)
	}
	w.busy = time.Since(t0)
	if fd >= 0 {
		unix.Close(fd)
	}
}

// load is the child: THREADS load threads, each pinned to a CPU, OPS
// operations each. It prints "T tid cpu node" per thread and "READY",
// runs once a byte arrives on stdin, then prints "R secs p50 p99 count"
// (or "E error").
func load(workload string, cpus []int, nthreads, ops int) {
	ws := make([]*worker, nthreads)
	var ready, start, done sync.WaitGroup
	ready.Add(nthreads)
	start.Add(1)
	done.Add(nthreads)
	for i := range ws {
		ws[i] = &worker{cpu: cpus[i%len(cpus)], ops: ops, lat: make([]float64, 0, ops)}
		go ws[i].run(workload, &ready, &start, &done)
	}
	ready.Wait()
	for _, w := range ws {
		fmt.Printf("T %d %d %d\n", w.tid, w.cpu, w.node)
	}
	fmt.Println("READY")
	var b [1]byte
	os.Stdin.Read(b[:])
	start.Done()
	done.Wait()
	var all []float64
	var secs float64
	for _, w := range ws {
		all = append(all, w.lat...)
		if w.busy.Seconds() > secs {
			secs = w.busy.Seconds()
		}
		if w.err != nil {
			fmt.Printf("E %v\n", w.err)
			return
		}
	}
	sort.Float64s(all)
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		i := int(float64(len(all)) * p)
		if i >= len(all) {
			i = len(all) - 1
		}
		return all[i]
	}
	fmt.Printf("R %.6f %.3f %.3f %d\n", secs, pct(0.5), pct(0.99), len(all))
}

func main() {
	if len(os.Args) == 6 && os.Args[1] == "-load" {
		nthreads, _ := strconv.Atoi(os.Args[3])
		ops, _ := strconv.Atoi(os.Args[4])
		var cpus []int
		for _, c := range strings.Split(os.Args[5], ",") {
			n, _ := strconv.Atoi(c)
			cpus = append(cpus, n)
		}
		load(os.Args[2], cpus, nthreads, ops)
		return
	}
	if len(os.Args) != 5 {
		fmt.Fprintf(os.Stderr, "usage: %s single|unbound|node|cpu getattr|read THREADS OPS\n", os.Args[0])
		os.Exit(2)
	}
	mode, workload := os.Args[1], os.Args[2]
	nthreads, _ := strconv.Atoi(os.Args[3])
	ops, _ := strconv.Atoi(os.Args[4])
	if workload != "getattr" && workload != "read" {
		fmt.Fprintln(os.Stderr, "workload: getattr or read")
		os.Exit(2)
	}
	cpus := onlineCPUs()
	if nthreads < 1 {
		k := 1
		if nthreads < 0 {
			k = -nthreads
		}
		nthreads = len(cpus) * k
	}
	opts := &fuse.MountOptions{
		DirectMount: true,
		Name:        "gofuse_bench",
		FsName:      "gofuse_bench",
	}
	if err := setMode(opts, mode); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fs := &benchFS{RawFileSystem: fuse.NewDefaultRawFileSystem(),
		nfiles: cpus[len(cpus)-1] + 1, data: make([]byte, 4096)}
	os.MkdirAll(mnt, 0755)
	srv, err := fuse.NewServer(fs, mnt, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mount:", err)
		os.Exit(1)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		fmt.Fprintln(os.Stderr, "mount:", err)
		os.Exit(1)
	}
	res, err := runLoad(mode, workload, cpus, nthreads, ops)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload error:", err)
	}
	if err := srv.Unmount(); err != nil {
		fmt.Fprintln(os.Stderr, "unmount:", err)
	}
	if err != nil {
		os.Exit(1)
	}
	fmt.Print(res)
}

// runLoad runs the load in a child process and returns the result line.
func runLoad(mode, workload string, cpus []int, nthreads, ops int) (string, error) {
	var list []string
	for _, c := range cpus {
		list = append(list, strconv.Itoa(c))
	}
	cmd := exec.Command("/proc/self/exe", "-load", workload, strconv.Itoa(nthreads),
		strconv.Itoa(ops), strings.Join(list, ","))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	defer cmd.Wait()
	out := bufio.NewScanner(outPipe)
	for out.Scan() && out.Text() != "READY" {
		var tid, cpu, node int
		if n, _ := fmt.Sscanf(out.Text(), "T %d %d %d", &tid, &cpu, &node); n == 3 {
			tidCPU[tid%maxTid] = int32(cpu + 1)
			tidNode[tid%maxTid] = int32(node)
		}
	}
	for i := range stats {
		stats[i] = cpuStat{}
	}
	ctx0, ipi0 := procStatCtxt(), procIPIs()
	mark()
	in.Write([]byte{1})
	var secs, p50, p99 float64
	var count int
	var line string
	for out.Scan() {
		line = out.Text()
		if strings.HasPrefix(line, "R ") || strings.HasPrefix(line, "E ") {
			break
		}
	}
	mark()
	ctx1, ipi1 := procStatCtxt(), procIPIs()
	if n, _ := fmt.Sscanf(line, "R %f %f %f %d", &secs, &p50, &p99, &count); n != 4 {
		return "", fmt.Errorf("the load: %q", line)
	}

	var reqs, known, lc, ln uint64
	for i := range stats {
		reqs += atomic.LoadUint64(&stats[i].reqs)
		known += atomic.LoadUint64(&stats[i].known)
		lc += atomic.LoadUint64(&stats[i].localCPU)
		ln += atomic.LoadUint64(&stats[i].localNode)
	}
	share := func(x uint64) float64 {
		if known == 0 {
			return 0
		}
		return 100 * float64(x) / float64(known)
	}
	per := func(x uint64) float64 {
		if reqs == 0 {
			return 0
		}
		return float64(x) / float64(reqs)
	}
	if secs <= 0 {
		secs = 1e-9
	}
	return fmt.Sprintf("go-%s\t%s\t%d\t%d\t%.6f\t%.0f\t%.3f\t%.3f\t%.1f\t%.1f\t%.2f\t%.2f\t%d\n",
		mode, workload, nthreads, ops, secs, float64(count)/secs, p50, p99,
		share(lc), share(ln), per(ctx1-ctx0), per(ipi1-ipi0), reqs), nil
}

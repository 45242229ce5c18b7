package benchutil

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

var sink int

func TestReadStatAndChildren(t *testing.T) {
	self, ok := ReadStat(os.Getpid())
	if !ok {
		t.Skip("no /proc here")
	}
	if self.PPid != os.Getppid() || self.State != "R" || self.StartTime == "" {
		t.Errorf("self: %+v (ppid %d)", self, os.Getppid())
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer cmd.Process.Kill()
	if kids := Children(os.Getpid()); !slices.Contains(kids, cmd.Process.Pid) {
		t.Errorf("Children = %v, want %d among them", kids, cmd.Process.Pid)
	}
	// Burn 100 ms of CPU: the process's figure must show most of it.
	var ru syscall.Rusage
	for {
		for x := range 1_000_000 {
			sink += x * x
		}
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		if (ru.Utime.Nano()+ru.Stime.Nano())/1e6 >= int64(self.CPUMillis)+100 {
			break
		}
	}
	if later, _ := ReadStat(os.Getpid()); later.CPUMillis < self.CPUMillis+80 || later.StartTime != self.StartTime {
		t.Errorf("after 100 ms of CPU: %+v, before %+v", later, self)
	}
	if _, ok := ReadStat(1 << 30); ok {
		t.Error("a pid that cannot exist was read")
	}
}

package bench

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// treeCPU counts what a child process used once it was reaped (cutime/cstime): a shell loop's
// CPU, as the kernel reports it for the child, shows in this process's tree total.
func TestTreeCPUCountsReapedChildren(t *testing.T) {
	before := treeCPU(os.Getpid())
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	used := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if used < 200*time.Millisecond {
		t.Skipf("the loop used only %s: too little to tell from the tick rounding", used)
	}
	got := time.Duration((treeCPU(os.Getpid()) - before) * float64(time.Second))
	if got < used-20*time.Millisecond {
		t.Fatalf("tree CPU grew by %s, the reaped child alone used %s", got, used)
	}
}

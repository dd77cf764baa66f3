package bench

import "context"

// The remote floor's fan-out, beside the benchmark it serves: it runs the benchmark's case
// (workersCase) through the benchmark's fleet, both of which live in test files.

// fanOut runs one fan-out of workersCase on the floor, its notifier beside it; the children's
// messages are read from the workers through fleet.
func (f *remoteFloorParent) fanOut(ctx context.Context, fleet fleetServed, label string) (*run, error) {
	notifyCtx, stop := context.WithCancel(ctx)
	defer stop()
	go remoteFloorNotifier(notifyCtx, f.parent, f.workers, f.launched, fileSize(f.launched), f.told, len(workersCase.Delays))
	fleet.served = served{f.parent}
	return fanOut(ctx, floorServed{fleet, toldFile{f.told}}, f.model, remoteFloor, workersCase, label)
}

// floorServed is the fleet as fanOut sees it for the remote floor: told from its file.
type floorServed struct {
	fleetServed
	toldFile
}

func (s floorServed) allTold(ctx context.Context, parent string, n int) (bool, error) {
	return s.toldFile.allTold(ctx, parent, n)
}

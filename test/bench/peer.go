package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The peer's namespaces: peer-steady works on what peer-burst leaves, as
// steady does on burst's.
const (
	nsPeerBacklog = "bench-peer-backlog"
	nsPeerBurst   = "bench-peer-burst"
)

// peerResults are the peer's runs of the backlog, burst and steady steps:
// test/bench/peer, a controller written as `kubebuilder create api`
// scaffolds it, on the same cluster.
type peerResults struct {
	Binary      string `json:"binary"`
	BinaryBytes int64  `json:"binaryBytes,omitempty"`
	// Errors are the peer steps that failed; the run went on without them.
	Errors  []string        `json:"errors,omitempty"`
	Backlog *convergeResult `json:"backlog,omitempty"`
	Burst   *convergeResult `json:"burst,omitempty"`
	Steady  *steadyResult   `json:"steady,omitempty"`
}

func (b *bench) peerBacklog(ctx context.Context) (*convergeResult, error) {
	if err := b.checkOnlyPeerObjects(ctx, nsPeerBacklog); err != nil {
		return nil, err
	}
	return b.backlogIn(ctx, b.peer(), nsPeerBacklog, b.runLabel("peer-backlog"))
}

func (b *bench) peerBurst(ctx context.Context) (*convergeResult, error) {
	if err := b.checkOnlyPeerObjects(ctx, nsPeerBurst); err != nil {
		return nil, err
	}
	return b.burstIn(ctx, b.peer(), nsPeerBurst, "peer-burst")
}

func (b *bench) peerSteady(ctx context.Context) (*steadyResult, error) {
	if err := b.checkOnlyPeerObjects(ctx, nsPeerBurst); err != nil {
		return nil, err
	}
	return b.steadyIn(ctx, b.peer(), nsPeerBurst, "peer-steady")
}

// peerFailed records the error of a peer step, if any, and lets the run go
// on: the controller's figures of the steps still to come are worth more
// than the comparison, and the run fails in the end anyway. Returning nil
// also has the step's namespaces removed, as the controller's next step
// needs. An interrupted run stops.
func (b *bench) peerFailed(ctx context.Context, step string, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	b.report.Peer.Errors = append(b.report.Peer.Errors, fmt.Sprintf("step %s: %v", step, err))
	b.logf("step %s failed, going on without it: %v", step, err)
	return nil
}

// checkOnlyPeerObjects fails when DeployObjects exist outside ns: the peer
// watches every namespace, and would take over those the controller's steps
// left, which the order of the steps is meant to prevent.
func (b *bench) checkOnlyPeerObjects(ctx context.Context, ns string) error {
	list, err := b.client.AppV1().DeployObjects("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace!=" + ns, Limit: 1})
	if err != nil {
		return fmt.Errorf("listing DeployObjects outside %s: %w", ns, err)
	}
	if len(list.Items) > 0 {
		return fmt.Errorf("DeployObject %s/%s exists while the peer, which watches every namespace, is to run in %s",
			list.Items[0].Namespace, list.Items[0].Name, ns)
	}
	return nil
}

// sideBySide is one figure of the controller next to the peer's.
type sideBySide struct {
	step, name   string
	ours, peer   string
	ratio, about string
}

// peerComparison lists the figures both the controller and the peer have in
// r. Times compare as throughput (the peer's time over the controller's:
// how many times faster the controller is); writes and memory as the
// controller's share of the peer's.
func peerComparison(r *report) []sideBySide {
	p := r.Peer
	if p == nil {
		return nil
	}
	var out []sideBySide
	faster := func(step, name string, ours, peer float64) {
		out = append(out, sideBySide{step, name, fmt.Sprintf("%.2f s", ours), fmt.Sprintf("%.2f s", peer), ratio(peer, ours), "× the peer's throughput"})
	}
	share := func(step, name string, ours, peer float64, format func(float64) string) {
		out = append(out, sideBySide{step, name, format(ours), format(peer), ratio(ours, peer), "of the peer's"})
	}
	perObject := func(v float64) string { return fmt.Sprintf("%.3f", v) }
	count := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	if c, pc := r.Backlog, p.Backlog; c != nil && pc != nil {
		faster("backlog", "start → all reconciled", c.ReconciledSeconds, pc.ReconciledSeconds)
		faster("backlog", "start → all Ready", c.ReadySeconds, pc.ReadySeconds)
		share("backlog", "writes/object to Ready", c.Writes.PerObject, pc.Writes.PerObject, perObject)
		share("backlog", "CPU per 1000 reconciles", c.CPUSecondsPer1000Reconciles, pc.CPUSecondsPer1000Reconciles, func(v float64) string { return fmt.Sprintf("%.3f s", v) })
		share("backlog", "CPU in all", c.CPUSeconds, pc.CPUSeconds, func(v float64) string { return fmt.Sprintf("%.2f s", v) })
		if m, pm := c.Memory, pc.Memory; m != nil && pm != nil {
			share("backlog", "heap in use per DeployObject, net", m.HeapInusePerObjectNetBytes, pm.HeapInusePerObjectNetBytes, kib)
			share("backlog", "RSS per DeployObject, net", m.RSSPerObjectNetBytes, pm.RSSPerObjectNetBytes, kib)
			share("backlog", "heap in use, Ready", m.Ready.HeapInuseBytes, pm.Ready.HeapInuseBytes, mib)
			share("backlog", "RSS, Ready", m.Ready.RSSBytes, pm.Ready.RSSBytes, mib)
			if m.Ready.PeakRSSBytes > 0 && pm.Ready.PeakRSSBytes > 0 {
				share("backlog", "peak RSS to Ready", m.Ready.PeakRSSBytes, pm.Ready.PeakRSSBytes, mib)
			}
		}
	}
	if c, pc := r.Burst, p.Burst; c != nil && pc != nil {
		faster("burst", "first create → all Ready", c.ReadySeconds, pc.ReadySeconds)
		share("burst", "writes/object to Ready", c.Writes.PerObject, pc.Writes.PerObject, perObject)
	}
	if s, ps := r.Steady, p.Steady; s != nil && ps != nil {
		share("steady", "writes across resyncs", s.ResyncWrites.Total, ps.ResyncWrites.Total, count)
		share("steady", "writes after restart", s.RestartWrites.Total, ps.RestartWrites.Total, count)
	}
	if r.ControllerBinaryBytes > 0 && p.BinaryBytes > 0 {
		share("binary", "size", float64(r.ControllerBinaryBytes), float64(p.BinaryBytes), func(v float64) string { return megabytes(int64(v)) })
	}
	return out
}

// ratio is a / b, or "-" when b is zero.
func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// printPeerComparison writes the side-by-side table, when the peer ran.
func printPeerComparison(out io.Writer, r *report) error {
	rows := peerComparison(r)
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(out, "\nside by side with the peer (%s, a kubebuilder scaffold on controller-runtime), N=%d:\n", r.Peer.Binary, r.N)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "STEP\tFIGURE\tCONTROLLER\tPEER\tRATIO")
	for _, s := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s %s\n", s.step, s.name, s.ours, s.peer, s.ratio, s.about)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("printing the comparison with the peer: %w", err)
	}
	return nil
}

package daemon

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// With maxInFlight requests read and unanswered, Read takes no further frame (although one
// is waiting) until an answer goes out; then it returns that frame.
func TestLineConnHoldsReadsAtTheInFlightBound(t *testing.T) {
	lc, _, client, _ := newTestLineConn(t)
	var b strings.Builder
	for i := 1; i <= maxInFlight+1; i++ {
		b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"ping"}` + "\n")
	}
	if _, err := client.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	ctx := readCtx(t)
	for i := 1; i <= maxInFlight; i++ {
		if _, err := lc.Read(ctx); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	// The next frame is already here; a Read that does not hold would return it at once.
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	msg, err := lc.Read(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read past the bound: %v %v, want it held", msg, err)
	}
	_ = lc.c.SetReadDeadline(time.Time{}) // the short context's end set a past deadline
	id, _ := jsonrpc.MakeID(float64(1))
	if err := lc.Write(ctx, &jsonrpc.Response{ID: id, Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	msg, err = lc.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := msg.(*jsonrpc.Request); !ok || r.ID.Raw() != int64(maxInFlight+1) {
		t.Fatalf("after an answer: %#v, want request %d", msg, maxInFlight+1)
	}
}

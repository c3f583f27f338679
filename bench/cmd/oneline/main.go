// Command oneline is the spawn baseline of issue 23: a bare Go program that reads one line and answers one.
//
// It answers with an initialize result of the gateway's size, so a harness that spawns it
// and one that spawns `resmongw stdio` wait for the same thing; benchtable times both.
package main

import (
	"bufio"
	"os"
)

const answer = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"resmon","version":"0"}}}` + "\n"

func main() {
	if _, err := bufio.NewReader(os.Stdin).ReadSlice('\n'); err != nil {
		os.Exit(1)
	}
	if _, err := os.Stdout.WriteString(answer); err != nil {
		os.Exit(1)
	}
}

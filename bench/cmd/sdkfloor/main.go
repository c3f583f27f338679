// Command sdkfloor is the daemon-CPU baseline of issue 23: go-sdk's own stdio server answering one tool from a raw handler.
//
// Its tool `health` answers a fixed text of -bytes bytes (benchtable passes the size of the
// gateway's health text) with no schema validation and no backend: what the SDK alone costs
// per call, the floor the daemon's CPU per call is compared with.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	size := flag.Int("bytes", 200, "length of the health text")
	flag.Parse()
	text := strings.Repeat("x", *size)
	s := mcp.NewServer(&mcp.Implementation{Name: "sdkfloor", Version: "0"}, nil)
	s.AddTool(&mcp.Tool{Name: "health", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "sdkfloor:", err)
		os.Exit(1)
	}
}

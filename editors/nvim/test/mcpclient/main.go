// Command mcpclient is the MCP client of the Neovim suite's attached test
// (editors/nvim/test/attached_spec.lua): the official Go SDK's client runs
// `agentls mcp` with the given arguments, names itself -name/-title in
// initialize, makes the calls given as a JSON array of {name, arguments},
// one after the other, and prints each result on a line of its own as
// {"isError": bool, "text": "..."} (the text blocks joined). It exits 1 when
// the server cannot be started or a call fails at the protocol level.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type call struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

type result struct {
	IsError bool   `json:"isError"`
	Text    string `json:"text"`
}

func main() {
	name := flag.String("name", "mcpclient", "the client's clientInfo name")
	title := flag.String("title", "", "the client's clientInfo title")
	calls := flag.String("calls", "[]", "the calls: a JSON array of {name, arguments}")
	flag.Parse()
	if err := run(*name, *title, *calls, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "mcpclient:", err)
		os.Exit(1)
	}
}

// run starts the server (args: the command and its arguments) and makes the calls.
func run(name, title, calls string, args []string) error {
	var cs []call
	if err := json.Unmarshal([]byte(calls), &cs); err != nil {
		return fmt.Errorf("parse -calls: %w", err)
	}
	if len(args) == 0 {
		return fmt.Errorf("no server command")
	}
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: name, Title: title, Version: "1"}, nil)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	session, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer session.Close()
	out := json.NewEncoder(os.Stdout)
	for _, c := range cs {
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: c.Name, Arguments: c.Arguments})
		if err != nil {
			return fmt.Errorf("call %s: %w", c.Name, err)
		}
		var text []string
		for _, content := range res.Content {
			if t, ok := content.(*sdk.TextContent); ok {
				text = append(text, t.Text)
			}
		}
		if err := out.Encode(result{IsError: res.IsError, Text: strings.Join(text, "")}); err != nil {
			return err
		}
	}
	return nil
}

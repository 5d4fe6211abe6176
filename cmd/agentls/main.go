// Command agentls is the agentls language server and its command line.
package main

import (
	"context"
	"os"

	"github.com/agentls/agentls/cli"
)

func main() {
	fi, err := os.Stdin.Stat()
	isTerm := err == nil && fi.Mode()&os.ModeCharDevice != 0
	os.Exit(cli.Main(context.Background(), os.Args[1:], cli.IO{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, StdinIsTerminal: isTerm,
	}))
}

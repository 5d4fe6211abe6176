package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/protocol"
)

// didChangeConfiguration takes settings.agentls as the highest layer. An
// invalid one is reported and the last valid configuration stays.
type didChangeConfigurationParams struct {
	Settings struct {
		Agentls json.RawMessage `json:"agentls"`
	} `json:"settings"`
}

func (s *server) didChangeConfiguration(_ context.Context, p didChangeConfigurationParams) error {
	if err := s.sess.SetSettings("workspace/didChangeConfiguration", p.Settings.Agentls); err != nil {
		s.reportConfigError(err)
		return nil
	}
	s.log.Info("configuration changed")
	return nil
}

// reportConfigErrors reports each configuration error.
func (s *server) reportConfigErrors(errs []error) {
	for _, e := range errs {
		s.reportConfigError(e)
	}
}

// reportConfigError tells the person (showMessage) and the log.
func (s *server) reportConfigError(err error) {
	s.log.Warn("configuration", "err", err)
	msg := fmt.Sprintf("agentls: %v. The last valid configuration stays in force.", err)
	if nerr := s.conn.Notify(context.Background(), "window/showMessage", protocol.ShowMessageParams{Type: protocol.MessageTypeError, Message: msg}); nerr != nil {
		s.log.Warn("showMessage", "err", nerr)
	}
}

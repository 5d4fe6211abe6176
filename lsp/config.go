package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/workspace"
)

// didChangeConfiguration takes settings.agentls as the highest layer. An
// invalid one is reported and the last valid configuration stays.
type didChangeConfigurationParams struct {
	Settings struct {
		Agentls json.RawMessage `json:"agentls"`
	} `json:"settings"`
}

func (s *session) didChangeConfiguration(_ context.Context, p didChangeConfigurationParams) error {
	cfg, err := s.configs.Set(workspace.LayerSettings, "workspace/didChangeConfiguration", p.Settings.Agentls)
	if err != nil {
		s.reportConfigError(err)
		return nil
	}
	s.ws.SetConfig(cfg)
	s.searchCacheReset()
	s.log.Info("configuration changed")
	return nil
}

func (s *session) reloadConfigFiles() {
	cfg, errs := s.configs.LoadFiles(s.ws.Roots())
	s.ws.SetConfig(cfg)
	s.searchCacheReset()
	for _, e := range errs {
		s.reportConfigError(e)
	}
}

// reportConfigError tells the person (showMessage) and the log.
func (s *session) reportConfigError(err error) {
	s.log.Warn("configuration", "err", err)
	msg := fmt.Sprintf("agentls: %v. The last valid configuration stays in force.", err)
	if nerr := s.conn.Notify(context.Background(), "window/showMessage", protocol.ShowMessageParams{Type: protocol.MessageTypeError, Message: msg}); nerr != nil {
		s.log.Warn("showMessage", "err", nerr)
	}
}

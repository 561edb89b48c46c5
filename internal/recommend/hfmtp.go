package recommend

// hfMTP holds the count of multi-token-prediction layers a checkpoint
// carries in Qwen3.5's and Qwen3-Next's name (DeepSeek's,
// num_nextn_predict_layers, is NumNextNPredictLayers).
type hfMTP struct {
	MTPNumHiddenLayers *int64 `json:"mtp_num_hidden_layers"`
}

// mtpLayers is the checkpoint's multi-token-prediction layers, from the
// config or its text_config; families whose counters include them in the
// model (Ling 2.0's bailing_moe) report none beside it.
func mtpLayers(c hfConfig, family string) int {
	if family == "bailing_moe" {
		return 0
	}
	for _, cfg := range []*hfConfig{&c, c.TextConfig} {
		if cfg == nil {
			continue
		}
		for _, v := range []*int64{cfg.NumNextNPredictLayers, cfg.MTPNumHiddenLayers} {
			if v != nil && *v > 0 && *v <= 16 {
				return int(*v)
			}
		}
	}
	return 0
}

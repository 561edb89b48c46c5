// Package oomsim estimates the device memory a model needs and simulates
// what a careful engineer would change when it does not fit.
//
// Estimate turns a Plan (model, mode, precision, batch, sequence, optimizer,
// recomputation, sharding, offload) into a Breakdown where every term is in
// bytes and the convention that produced it is named: "eleutherai" (the
// EleutherAI "Transformer Math 101" accounting, mixed-precision AdamW at 16
// bytes per parameter of model states), "accelerate" (what `accelerate
// estimate-memory` prints: totals and its per-stage "Training using Adam"
// peak) or "deepspeed" (the ZeRO-2/ZeRO-3 model-state estimators).
//
// Ladder is the seed design's handle_oom(error, config) -> config: given a
// plan that does not fit a device, it tries the cheapest changes first and
// stops at the first that fits, returning the trace. It knows nothing about
// flags, output or the probe, so `devctl doctor` can call it for an
// out-of-memory log as well.
package oomsim

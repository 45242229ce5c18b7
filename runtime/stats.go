package runtime

// Queued is how many runs wait for a worker now (the fair queue's length),
// for metrics and the operator console.
func (r *Runtime) Queued() int { return r.sched.queued() }

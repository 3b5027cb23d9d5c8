package gpu

// Candidates exposes to the external tests the plans the scheduler would consider for a
// partition of shape on its first device, best first.
func (s *Scheduler) Candidates(shape Shape) []Plan {
	return s.candidates(s.devs[0], &Partition{Shape: shape})
}

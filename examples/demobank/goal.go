package demobank

import (
	"fmt"
	"math"
	"net/http"
)

type goalResponse struct {
	Name            string  `json:"name"`
	Target          float64 `json:"target"`
	Saved           float64 `json:"saved"`
	Progress        float64 `json:"progress"`
	FormattedSaved  string  `json:"formatted_saved"`
	FormattedTarget string  `json:"formatted_target"`
	Percent         string  `json:"percent"`
}

// handleGoal serves GET /goal, the user's savings goal.
func (b *Bank) handleGoal(w http.ResponseWriter, r *http.Request) {
	key, ok := authorize(w, r)
	if !ok {
		return
	}
	if _, err := readQuery(r); err != nil {
		writeInvalid(w, "%v", err)
		return
	}

	var g goal
	if !b.withUser(w, key, func(u *user) { g = u.goal }) {
		return
	}

	progress := math.Min(float64(g.saved)/float64(g.target), 1)
	writeJSON(w, http.StatusOK, goalResponse{
		Name:            g.name,
		Target:          g.target.dollars(),
		Saved:           g.saved.dollars(),
		Progress:        progress,
		FormattedSaved:  g.saved.String(),
		FormattedTarget: g.target.String(),
		Percent:         fmt.Sprintf("%d%%", min(g.saved*100/g.target, 100)),
	})
}

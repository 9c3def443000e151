package toolsets

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/convengine/engine"
)

// maxRoutes bounds the remembered routes: past it, they are forgotten all at once and listed
// again when needed.
const maxRoutes = 4096

// ErrNameClash is wrapped by the error of [Toolset.Tools] when two members list a tool of the
// same name.
var ErrNameClash = errors.New("toolsets: two toolsets list the same tool")

// A Member is one toolset of a combination, with the name its errors and logs give it.
type Member struct {
	Name    string
	Toolset engine.Toolset
}

// Toolset is an [engine.Toolset] made of several. It is safe for concurrent use if its members
// are, which the engine requires of every Toolset.
type Toolset struct {
	members []Member
	salt    [32]byte

	mu     sync.Mutex
	routes map[string]map[string]int // route key → tool name → member index
}

var (
	_ engine.UserToolset   = (*Toolset)(nil)
	_ engine.Preconnector  = (*Toolset)(nil)
	_ engine.DeviceChecker = (*Toolset)(nil)
)

// Combine returns the combination of sets, named after their place and type in errors (such as
// `toolset 2 (*httptools.Toolset)`). Nil sets are left out.
func Combine(sets ...engine.Toolset) *Toolset {
	members := make([]Member, 0, len(sets))
	for i, s := range sets {
		members = append(members, Member{Name: fmt.Sprintf("toolset %d (%T)", i+1, s), Toolset: s})
	}
	return New(members...)
}

// New returns the combination of members. Members without a Toolset are left out; one without
// a name is named after its place and type, as [Combine] names them.
func New(members ...Member) *Toolset {
	ts := &Toolset{routes: map[string]map[string]int{}}
	for i, m := range members {
		if m.Toolset == nil {
			continue
		}
		if m.Name == "" {
			m.Name = fmt.Sprintf("toolset %d (%T)", i+1, m.Toolset)
		}
		ts.members = append(ts.members, m)
	}
	rand.Read(ts.salt[:])
	return ts
}

// Tools lists the tools of every member, at the same time, and returns them in the members'
// order. A member's failure fails the listing, naming the member; so does a name that two
// members list (an error wrapping [ErrNameClash]).
func (ts *Toolset) Tools(ctx context.Context, env *engine.ToolEnv) ([]engine.Tool, error) {
	tools, routes, err := ts.list(ctx, env)
	if err != nil {
		return nil, err
	}
	ts.remember(ts.routeKey(env), routes)
	return tools, nil
}

// list lists the members' tools and indexes them by name.
func (ts *Toolset) list(ctx context.Context, env *engine.ToolEnv) ([]engine.Tool, map[string]int, error) {
	lists := make([][]engine.Tool, len(ts.members))
	errs := make([]error, len(ts.members))
	var wg sync.WaitGroup
	for i, m := range ts.members {
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil { // on a goroutine of our own, a panic would end the process
					errs[i] = fmt.Errorf("panicked: %T", v)
				}
			}()
			lists[i], errs[i] = m.Toolset.Tools(ctx, env)
		})
	}
	wg.Wait()
	n := 0
	for i, err := range errs {
		if err != nil {
			return nil, nil, fmt.Errorf("toolsets: listing the tools of %s: %w", ts.members[i].Name, err)
		}
		n += len(lists[i])
	}
	tools := make([]engine.Tool, 0, n)
	routes := make(map[string]int, n)
	for i, list := range lists {
		for _, tool := range list {
			if j, ok := routes[tool.Name]; ok && j != i {
				return nil, nil, fmt.Errorf("%w: tool %q is listed by %s and by %s; rename one of them",
					ErrNameClash, tool.Name, ts.members[j].Name, ts.members[i].Name)
			}
			routes[tool.Name] = i
			tools = append(tools, tool)
		}
	}
	return tools, routes, nil
}

// Call runs call on the member that listed its tool for env. The routes of the last listing
// for env's tenant environment (and user, where a member lists per user) are reused; without
// them, or when the member they name no longer has the tool, the members are listed again. A
// tool no member lists is an error wrapping [engine.ErrToolNotFound].
func (ts *Toolset) Call(ctx context.Context, env *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
	key := ts.routeKey(env)
	i, known := ts.route(key, call.Name)
	if known {
		res, err := ts.members[i].Toolset.Call(ctx, env, call)
		if !errors.Is(err, engine.ErrToolNotFound) {
			return res, err
		}
		// The member no longer has the tool (the tenant's configuration changed): nothing was
		// done, so the tool may be called where it is now.
	}
	_, routes, err := ts.list(ctx, env)
	if err != nil {
		return engine.ToolResult{}, fmt.Errorf("toolsets: finding the toolset of %q: %w", call.Name, err)
	}
	ts.remember(key, routes)
	j, ok := routes[call.Name]
	if !ok || (known && j == i) {
		return engine.ToolResult{}, fmt.Errorf("toolsets: tool %q: %w", call.Name, engine.ErrToolNotFound)
	}
	return ts.members[j].Toolset.Call(ctx, env, call)
}

// routeKey names the routes of env: its tenant environment's, and its user's when a member
// lists tools per user. The user's token is kept only as a keyed hash.
func (ts *Toolset) routeKey(env *engine.ToolEnv) string {
	key := ""
	if env.Tenant != nil {
		key = env.Tenant.Key
	}
	if env.Environment != nil {
		key += "\x00" + env.Environment.Name
	}
	if ts.ListsPerUser(env) {
		mac := hmac.New(sha256.New, ts.salt[:])
		mac.Write([]byte(env.UserToken.Reveal()))
		key += "\x00" + hex.EncodeToString(mac.Sum(nil)[:16])
	}
	return key
}

func (ts *Toolset) route(key, name string) (int, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	i, ok := ts.routes[key][name]
	return i, ok
}

func (ts *Toolset) remember(key string, routes map[string]int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if _, ok := ts.routes[key]; !ok && len(ts.routes) >= maxRoutes {
		ts.routes = map[string]map[string]int{}
	}
	ts.routes[key] = routes
}

// ListsPerUser reports whether any member that is an [engine.UserToolset] lists env's tools per
// user: then the combined list is the user's own too.
func (ts *Toolset) ListsPerUser(env *engine.ToolEnv) bool {
	for _, m := range ts.members {
		if ut, ok := m.Toolset.(engine.UserToolset); ok && ut.ListsPerUser(env) {
			return true
		}
	}
	return false
}

// Preconnect lets every member that is an [engine.Preconnector] open its connections, at the
// same time, and returns their errors joined.
func (ts *Toolset) Preconnect(ctx context.Context, env *engine.ToolEnv) error {
	errs := make([]error, len(ts.members))
	var wg sync.WaitGroup
	for i, m := range ts.members {
		pc, ok := m.Toolset.(engine.Preconnector)
		if !ok {
			continue
		}
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					errs[i] = fmt.Errorf("toolsets: preconnecting %s panicked: %T", m.Name, v)
				}
			}()
			if err := pc.Preconnect(ctx, env); err != nil {
				errs[i] = fmt.Errorf("toolsets: preconnecting %s: %w", m.Name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// CheckDevice asks every member that is an [engine.DeviceChecker], in order, whether key is
// enrolled for env's user. A device check concerns the session, not one action, so there is no
// one member to ask: the key is enrolled only when every member that has a device check says so
// (a member answering [engine.ErrNoDeviceCheck] has none), and the first refusal or error
// decides. When no member has a device check, CheckDevice returns [engine.ErrNoDeviceCheck].
func (ts *Toolset) CheckDevice(ctx context.Context, env *engine.ToolEnv, key *engine.DeviceKey) (bool, error) {
	asked := false
	for _, m := range ts.members {
		dc, ok := m.Toolset.(engine.DeviceChecker)
		if !ok {
			continue
		}
		enrolled, err := dc.CheckDevice(ctx, env, key)
		switch {
		case errors.Is(err, engine.ErrNoDeviceCheck):
			continue
		case err != nil:
			return false, fmt.Errorf("toolsets: device check of %s: %w", m.Name, err)
		case !enrolled:
			return false, nil
		}
		asked = true
	}
	if !asked {
		return false, engine.ErrNoDeviceCheck
	}
	return true, nil
}

package redact

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/pelletier/go-toml/v2"
	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/regexp"
)

// gitleaks' default rules are used one of two ways, which find the same
// secrets (TestLazyDetector):
//
//   - whole: Load builds gitleaks' own detector of every rule (about 100 ms:
//     some 220 regexps, the tries of keywords and stop words) and every
//     string is scanned by it. A server calls Load once its first index
//     builds ended (lsp/index.go: not beside them).
//   - lazily, until Load is called: the rules are read from gitleaks'
//     embedded configuration without compiling anything (a few ms), and a
//     string is scanned by a gitleaks detector of the rules that can run
//     on it: gitleaks runs a rule only when the lowercased text holds one
//     of its keywords (or the rule has none), so the others can be left
//     out. A rule is compiled the first time a string needs it. A process
//     that redacts a few short strings (agentls call) pays for the few
//     rules their words call for.

var (
	// whole is set once Load was called: every string goes to detector.
	whole        atomic.Bool
	detectorOnce sync.Once
	detector     *detect.Detector
	// prefilter holds every keyword of gitleaks' rules, lowercased, and
	// unkeyed the rules that have none (see cannotFind).
	prefilter *ahocorasick.Trie
	unkeyed   []config.Rule
)

// quietGitleaks stops gitleaks' logging: it logs to stderr, and what it
// logs can hold what it found.
var quietGitleaks = sync.OnceFunc(func() { logging.Logger = zerolog.Nop() })

// gitleaksDetector loads gitleaks' default rules once, whole. They are
// embedded in the module, so a failure to load them is a broken build.
func gitleaksDetector() *detect.Detector {
	detectorOnce.Do(func() {
		quietGitleaks()
		d, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			panic(fmt.Sprintf("redact: gitleaks default rules: %v", err))
		}
		detector = d
		var kw []string
		for _, r := range d.Config.Rules {
			if len(r.Keywords) == 0 {
				unkeyed = append(unkeyed, r)
			}
			for _, k := range r.Keywords {
				kw = append(kw, strings.ToLower(k))
			}
		}
		prefilter = ahocorasick.NewTrieBuilder().AddStrings(kw).Build()
	})
	return detector
}

// Load loads the whole rule set now (about 100 ms) rather than rule by rule
// as strings need them. Servers call it at start.
func Load() {
	whole.Store(true)
	gitleaksDetector()
}

// detectorFor returns the detector to scan s with, nil when gitleaks is
// sure to find nothing in it.
func detectorFor(s string) *detect.Detector {
	if whole.Load() {
		if cannotFind(s) {
			return nil
		}
		return gitleaksDetector()
	}
	return lazyRules().detectorFor(s)
}

// cannotFind reports whether gitleaks' whole detector is sure to find
// nothing in s, which costs a keyword scan instead of the detector's fixed
// cost per string (tens of µs: it walks all of its rules). The detector
// runs a rule only when the lowercased text holds one of the rule's
// keywords, or for the rules that have none; with no keyword in s and no
// keyword-less rule that could match, it finds nothing. It answers false
// (run the detector) whenever it is not sure: when the detector decodes
// encoded text (MaxDecodeDepth), for a keyword-less rule it cannot judge.
func cannotFind(s string) bool {
	d := gitleaksDetector()
	if d.MaxDecodeDepth > 0 || prefilter.MatchFirstString(strings.ToLower(s)) != nil {
		return false
	}
	return !anyCanMatch(unkeyed, s)
}

// anyCanMatch reports whether one of rules, which have no keywords, may
// find something in s (a fragment without a file path).
func anyCanMatch(rules []config.Rule, s string) bool {
	for _, r := range rules {
		switch {
		case r.Regex != nil:
			if r.Regex.MatchString(s) {
				return true
			}
		case r.Path != nil:
			// A rule on file paths alone: the fragment has none.
			if r.Path.MatchString("") {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// catalog is gitleaks' default configuration, read but not compiled.
type catalog struct {
	vc    config.ViperConfig
	rules []lazyRule
	byID  map[string]int
	// words are the rules' keywords, lowercased, each with the rules that
	// have it; byPair indexes them by their first two bytes (short, those
	// of fewer).
	words   []keyword
	byPair  map[[2]byte][]int
	short   []int
	unkeyed []int

	globalOnce sync.Once
	global     []*config.Allowlist            // allowlists of every rule
	targeted   map[string][]*config.Allowlist // allowlists of some rules, by rule id
	detectors  sync.Map                       // rule set (ruleSetKey) -> *detect.Detector
	nDetectors atomic.Int64
}

type keyword struct {
	word  string
	rules []int
}

// lazyRule is one rule, compiled on first use.
type lazyRule struct {
	once sync.Once
	rule config.Rule
}

// maxDetectors bounds the detectors a catalog keeps, one per set of rules
// a string needed.
const maxDetectors = 256

var lazyRules = sync.OnceValue(func() *catalog {
	quietGitleaks()
	c := &catalog{byID: map[string]int{}, byPair: map[[2]byte][]int{}}
	// gitleaks reads it with viper, whose TOML reader this is; the rules
	// come out the same (TestLazyRules).
	if err := toml.Unmarshal([]byte(config.DefaultConfig), &c.vc); err != nil {
		panic(fmt.Sprintf("redact: gitleaks default rules: %v", err))
	}
	c.rules = make([]lazyRule, len(c.vc.Rules))
	wordIndex := map[string]int{}
	for i, vr := range c.vc.Rules {
		c.byID[vr.ID] = i
		if len(vr.Keywords) == 0 {
			c.unkeyed = append(c.unkeyed, i)
		}
		for _, k := range vr.Keywords {
			k = strings.ToLower(k)
			j, ok := wordIndex[k]
			if !ok {
				j = len(c.words)
				wordIndex[k] = j
				c.words = append(c.words, keyword{word: k})
				if len(k) < 2 {
					c.short = append(c.short, j)
				} else {
					p := [2]byte{k[0], k[1]}
					c.byPair[p] = append(c.byPair[p], j)
				}
			}
			if rs := c.words[j].rules; len(rs) == 0 || rs[len(rs)-1] != i {
				c.words[j].rules = append(rs, i)
			}
		}
	}
	return c
})

// candidates returns the rules gitleaks would run on a text whose
// lowercased form is lower (every rule one of whose keywords it holds, and
// the rules without keywords), with the rules those require, sorted; keyed
// says whether one of them has keywords.
func (c *catalog) candidates(lower string) (set []int, keyed bool) {
	seen := make([]bool, len(c.rules))
	wordSeen := make([]bool, len(c.words))
	add := func(i int) {
		if !seen[i] {
			seen[i] = true
			set = append(set, i)
		}
	}
	found := func(j int) {
		wordSeen[j] = true
		for _, i := range c.words[j].rules {
			add(i)
			keyed = true
		}
	}
	for _, j := range c.short {
		if strings.Contains(lower, c.words[j].word) {
			found(j)
		}
	}
	for i := 0; i+1 < len(lower); i++ {
		for _, j := range c.byPair[[2]byte{lower[i], lower[i+1]}] {
			if !wordSeen[j] && strings.HasPrefix(lower[i:], c.words[j].word) {
				found(j)
			}
		}
	}
	for _, i := range c.unkeyed {
		add(i)
	}
	// The rules of composite rules, which gitleaks looks up by id.
	for k := 0; k < len(set); k++ {
		for _, req := range c.vc.Rules[set[k]].Required {
			if j, ok := c.byID[req.ID]; ok {
				add(j)
			}
		}
	}
	slices.Sort(set)
	return set, keyed
}

// detectorFor returns a gitleaks detector of the rules that can run on s,
// nil when none can find anything.
func (c *catalog) detectorFor(s string) *detect.Detector {
	set, keyed := c.candidates(strings.ToLower(s))
	if !keyed {
		var rules []config.Rule
		for _, i := range set {
			rules = append(rules, c.rule(i))
		}
		if !anyCanMatch(rules, s) {
			return nil
		}
	}
	key := ruleSetKey(set)
	if d, ok := c.detectors.Load(key); ok {
		return d.(*detect.Detector)
	}
	c.globalOnce.Do(c.loadGlobal)
	cfg := config.Config{
		Rules:      make(map[string]config.Rule, len(set)),
		Keywords:   map[string]struct{}{},
		Allowlists: c.global,
	}
	for _, i := range set {
		r := c.rule(i)
		cfg.Rules[r.RuleID] = r
		cfg.OrderedRules = append(cfg.OrderedRules, r.RuleID)
		for _, k := range r.Keywords {
			cfg.Keywords[k] = struct{}{}
		}
	}
	d := detect.NewDetector(cfg)
	if c.nDetectors.Add(1) <= maxDetectors {
		c.detectors.Store(key, d)
	}
	return d
}

func ruleSetKey(set []int) string {
	var b strings.Builder
	for _, i := range set {
		fmt.Fprintf(&b, "%d,", i)
	}
	return b.String()
}

// rule returns rule i, compiled.
func (c *catalog) rule(i int) config.Rule {
	lr := &c.rules[i]
	lr.once.Do(func() {
		r, err := c.compile(i)
		if err != nil {
			panic(fmt.Sprintf("redact: gitleaks default rules: %v", err))
		}
		lr.rule = r
	})
	return lr.rule
}

// compile builds rule i as gitleaks' configuration does
// (config.ViperConfig.Translate), but for the stop words (see allowlist).
func (c *catalog) compile(i int) (config.Rule, error) {
	vr := c.vc.Rules[i]
	r := config.Rule{
		RuleID:      vr.ID,
		Description: vr.Description,
		SecretGroup: vr.SecretGroup,
		Entropy:     vr.Entropy,
		Keywords:    []string{},
		Tags:        []string{},
		SkipReport:  vr.SkipReport,
	}
	if vr.Path != "" {
		r.Path = regexp.MustCompile(vr.Path)
	}
	if vr.Regex != "" {
		r.Regex = regexp.MustCompile(vr.Regex)
	}
	for _, k := range vr.Keywords {
		r.Keywords = append(r.Keywords, strings.ToLower(k))
	}
	if vr.Tags != nil {
		r.Tags = vr.Tags
	}
	for _, req := range vr.Required {
		if req.ID == "" {
			return r, fmt.Errorf("%s: [[rules.required]] rule ID is empty", r.RuleID)
		}
		if _, ok := c.byID[req.ID]; !ok {
			return r, fmt.Errorf("%s: [[rules.required]] rule ID '%s' does not exist", r.RuleID, req.ID)
		}
		r.RequiredRules = append(r.RequiredRules, &config.Required{RuleID: req.ID, WithinLines: req.WithinLines, WithinColumns: req.WithinColumns})
	}
	// Validated before its allowlists are added: Validate would validate
	// them again, building the tries this file leaves out.
	if err := r.Validate(); err != nil {
		return r, err
	}
	als := vr.Allowlists
	if vr.AllowList != nil {
		if len(als) > 0 {
			return r, fmt.Errorf("%s: [rules.allowlist] is deprecated, it cannot be used alongside [[rules.allowlist]]", r.RuleID)
		}
		als = append(als[:0:0], vr.AllowList)
	}
	for _, a := range als {
		al, err := allowlist(a.Description, a.Condition, a.Commits, a.Paths, a.RegexTarget, a.Regexes, a.StopWords)
		if err != nil {
			return r, fmt.Errorf("%s: [[rules.allowlists]] %w", r.RuleID, err)
		}
		r.Allowlists = append(r.Allowlists, al)
	}
	c.globalOnce.Do(c.loadGlobal)
	r.Allowlists = append(r.Allowlists, c.targeted[r.RuleID]...)
	return r, nil
}

// loadGlobal builds the configuration's own allowlists: those of every
// rule, and those of the rules they name.
func (c *catalog) loadGlobal() {
	c.targeted = map[string][]*config.Allowlist{}
	all := c.vc.Allowlists
	if c.vc.AllowList != nil {
		if len(all) > 0 {
			panic("redact: gitleaks default rules: [allowlist] is deprecated, it cannot be used alongside [[allowlists]]")
		}
		all = append(all[:0:0], c.vc.AllowList)
	}
	for _, a := range all {
		al, err := allowlist(a.Description, a.Condition, a.Commits, a.Paths, a.RegexTarget, a.Regexes, a.StopWords)
		if err != nil {
			panic(fmt.Sprintf("redact: gitleaks default rules: [[allowlists]] %v", err))
		}
		if len(a.TargetRules) == 0 {
			c.global = append(c.global, al)
			continue
		}
		for _, id := range a.TargetRules {
			if _, ok := c.byID[id]; !ok {
				panic(fmt.Sprintf("redact: gitleaks default rules: [[allowlists]] target rule ID '%s' does not exist", id))
			}
			c.targeted[id] = append(c.targeted[id], al)
		}
	}
}

// allowlist builds an allowlist as gitleaks' configuration does, but for
// its stop words: gitleaks puts them in a trie (tens of ms for the 1,400
// of generic-api-key); here they stay a list, lowercased and without
// repeats, which Allowlist.ContainsStopWord then scans (a match is a stop
// word the lowercased secret contains, either way). They are set after
// Validate, which would build the trie.
func allowlist(desc, cond string, commits, paths []string, target string, regexes, stopWords []string) (*config.Allowlist, error) {
	var mc config.AllowlistMatchCondition
	switch strings.ToUpper(cond) {
	case "AND", "&&":
		mc = config.AllowlistMatchAnd
	case "", "OR", "||":
		mc = config.AllowlistMatchOr
	default:
		return nil, fmt.Errorf("unknown allowlist |condition| '%s' (expected 'and', 'or')", cond)
	}
	switch target {
	case "secret":
		target = ""
	case "", "match", "line":
	default:
		return nil, fmt.Errorf("unknown allowlist |regexTarget| '%s' (expected 'match', 'line')", target)
	}
	a := &config.Allowlist{Description: desc, MatchCondition: mc, Commits: commits, RegexTarget: target}
	for _, re := range regexes {
		a.Regexes = append(a.Regexes, regexp.MustCompile(re))
	}
	for _, p := range paths {
		a.Paths = append(a.Paths, regexp.MustCompile(p))
	}
	var words []string
	seen := map[string]bool{}
	for _, w := range stopWords {
		if w = strings.ToLower(w); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	if len(a.Commits)+len(a.Paths)+len(a.Regexes) > 0 {
		if err := a.Validate(); err != nil {
			return nil, err
		}
	} else if len(words) == 0 {
		return nil, fmt.Errorf("must contain at least one check for: commits, paths, regexes, or stopwords")
	}
	a.StopWords = words
	return a, nil
}

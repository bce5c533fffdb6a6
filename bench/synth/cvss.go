package main

import (
	"math"
	"math/rand/v2"
	"strings"
)

// This file draws CVSS vectors and scores them. CVSS 2.0 and 3.x scores
// follow the specifications' base-score formulas, so scores, severities
// and vectors agree. CVSS 4.0 scoring (a table of macro vectors) is only
// approximated from the equivalent 3.x score; the result is a plausible
// one-decimal score in 0..10 with the matching severity.

// v3Vector is a CVSS 3.x base vector, each metric as its one-letter code.
type v3Vector struct {
	AV, AC, PR, UI, S, C, I, A byte
}

// drawV3 draws a 3.x base vector, shaped by the record's first CWE the
// way real scores cluster per weakness (XSS is 6.1, SQL injection 9.8...).
func drawV3(r *rand.Rand, cwe string) v3Vector {
	v := v3Vector{AV: 'N', AC: 'L', PR: 'N', UI: 'N', S: 'U', C: 'H', I: 'H', A: 'H'}
	switch u := r.Float64(); {
	case u < 0.74:
	case u < 0.94:
		v.AV = 'L'
	case u < 0.975:
		v.AV = 'A'
	default:
		v.AV = 'P'
	}
	if r.Float64() < 0.13 {
		v.AC = 'H'
	}
	switch u := r.Float64(); {
	case u < 0.55:
	case u < 0.88:
		v.PR = 'L'
	default:
		v.PR = 'H'
	}
	if r.Float64() < 0.33 {
		v.UI = 'R'
	}
	if r.Float64() < 0.12 {
		v.S = 'C'
	}
	cia := func() byte {
		switch u := r.Float64(); {
		case u < 0.55:
			return 'H'
		case u < 0.8:
			return 'L'
		default:
			return 'N'
		}
	}
	v.C, v.I, v.A = cia(), cia(), cia()
	if r.Float64() < 0.65 {
		switch cwe {
		case "CWE-79":
			v = v3Vector{AV: 'N', AC: 'L', PR: v.PR, UI: 'R', S: 'C', C: 'L', I: 'L', A: 'N'}
			if v.PR == 'H' {
				v.PR = 'L'
			}
		case "CWE-89", "CWE-78", "CWE-77", "CWE-94", "CWE-502", "CWE-434":
			v = v3Vector{AV: 'N', AC: 'L', PR: v.PR, UI: 'N', S: 'U', C: 'H', I: 'H', A: 'H'}
		case "CWE-787", "CWE-416", "CWE-119", "CWE-120", "CWE-122", "CWE-190":
			v = v3Vector{AV: 'L', AC: 'L', PR: 'N', UI: 'R', S: 'U', C: 'H', I: 'H', A: 'H'}
		case "CWE-125", "CWE-200", "CWE-22", "CWE-532", "CWE-611":
			v.C, v.I, v.A = 'H', 'N', 'N'
		case "CWE-400", "CWE-476", "CWE-835", "CWE-770", "CWE-674", "CWE-1333":
			v.C, v.I, v.A = 'N', 'N', 'H'
			v.UI = 'N'
		case "CWE-352":
			v = v3Vector{AV: 'N', AC: 'L', PR: 'N', UI: 'R', S: 'U', C: v.C, I: v.I, A: v.A}
		}
	}
	if v.C == 'N' && v.I == 'N' && v.A == 'N' {
		v.I = 'L'
	}
	return v
}

// perturbV3 returns the vector a second source (a CNA) might give for the
// same flaw: usually the same, sometimes one or two metrics apart.
func perturbV3(r *rand.Rand, v v3Vector) v3Vector {
	if r.Float64() < 0.55 {
		return v
	}
	switch r.IntN(5) {
	case 0:
		v.PR = "NLH"[r.IntN(3)]
	case 1:
		v.AC = "LH"[r.IntN(2)]
	case 2:
		v.UI = "NR"[r.IntN(2)]
	case 3:
		v.A = "NLH"[r.IntN(3)]
	default:
		v.C, v.I = "NLH"[r.IntN(3)], "NLH"[r.IntN(3)]
	}
	if v.C == 'N' && v.I == 'N' && v.A == 'N' {
		v.C = 'L'
	}
	return v
}

// roundUp30 is CVSS 3.0's Roundup: the smallest one-decimal number not
// below x.
func roundUp30(x float64) float64 { return math.Ceil(x*10-1e-9) / 10 }

// roundUp31 is CVSS 3.1's Roundup, which avoids floating-point artefacts.
func roundUp31(x float64) float64 {
	i := int64(math.Round(x * 100000))
	if i%10000 == 0 {
		return float64(i) / 100000
	}
	return float64(i/10000+1) / 10
}

// round1 rounds x to one decimal, halves away from zero.
func round1(x float64) float64 { return math.Round(x*10) / 10 }

// score3 returns the base, exploitability and impact scores of v under
// CVSS version ver ("3.0" or "3.1").
func score3(v v3Vector, ver string) (base, expl, impact float64) {
	av := v3AVWeight[v.AV]
	ac := 0.77
	if v.AC == 'H' {
		ac = 0.44
	}
	var pr float64
	switch v.PR {
	case 'N':
		pr = 0.85
	case 'L':
		pr = 0.62
		if v.S == 'C' {
			pr = 0.68
		}
	default:
		pr = 0.27
		if v.S == 'C' {
			pr = 0.5
		}
	}
	ui := 0.85
	if v.UI == 'R' {
		ui = 0.62
	}
	cia := func(b byte) float64 {
		switch b {
		case 'H':
			return 0.56
		case 'L':
			return 0.22
		}
		return 0
	}
	iss := 1 - (1-cia(v.C))*(1-cia(v.I))*(1-cia(v.A))
	if v.S == 'U' {
		impact = 6.42 * iss
	} else {
		impact = 7.52*(iss-0.029) - 3.25*math.Pow(iss-0.02, 15)
	}
	expl = 8.22 * av * ac * pr * ui
	up := roundUp31
	if ver == "3.0" {
		up = roundUp30
	}
	switch {
	case impact <= 0:
		base = 0
	case v.S == 'U':
		base = up(math.Min(impact+expl, 10))
	default:
		base = up(math.Min(1.08*(impact+expl), 10))
	}
	return base, round1(expl), round1(impact)
}

// severity3 is the CVSS 3.x/4.0 qualitative rating of a base score.
func severity3(s float64) string {
	switch {
	case s == 0:
		return "NONE"
	case s < 4:
		return "LOW"
	case s < 7:
		return "MEDIUM"
	case s < 9:
		return "HIGH"
	}
	return "CRITICAL"
}

var (
	v3AVWeight = map[byte]float64{'N': 0.85, 'A': 0.62, 'L': 0.55, 'P': 0.2}

	v3AV = map[byte]string{'N': "NETWORK", 'A': "ADJACENT_NETWORK", 'L': "LOCAL", 'P': "PHYSICAL"}
	v3LH = map[byte]string{'L': "LOW", 'H': "HIGH", 'N': "NONE"}
	v3UI = map[byte]string{'N': "NONE", 'R': "REQUIRED"}
	v3S  = map[byte]string{'U': "UNCHANGED", 'C': "CHANGED"}

	v2AVWeight  = map[byte]float64{'L': 0.395, 'A': 0.646, 'N': 1.0}
	v2ACWeight  = map[byte]float64{'H': 0.35, 'M': 0.61, 'L': 0.71}
	v2AuWeight  = map[byte]float64{'M': 0.45, 'S': 0.56, 'N': 0.704}
	v2CIAWeight = map[byte]float64{'N': 0, 'P': 0.275, 'C': 0.660}
	v2AV        = map[byte]string{'N': "NETWORK", 'A': "ADJACENT_NETWORK", 'L': "LOCAL"}
	v2AC        = map[byte]string{'L': "LOW", 'M': "MEDIUM", 'H': "HIGH"}
	v2Au        = map[byte]string{'N': "NONE", 'S': "SINGLE", 'M': "MULTIPLE"}
	v2CIA       = map[byte]string{'N': "NONE", 'P': "PARTIAL", 'C': "COMPLETE"}
	v2FromV3AV  = map[byte]byte{'N': 'N', 'A': 'A', 'L': 'L', 'P': 'L'}

	v4AV = map[byte]string{'N': "NETWORK", 'A': "ADJACENT", 'L': "LOCAL", 'P': "PHYSICAL"}
	v4UI = map[byte]string{'N': "NONE", 'P': "PASSIVE", 'A': "ACTIVE"}
	v4AT = map[byte]string{'N': "NONE", 'P': "PRESENT"}
)

// metricV3 builds a cvssMetricV30/V31 element for v.
func metricV3(v v3Vector, ver, source, typ string) CVSSMetricV3 {
	base, expl, impact := score3(v, ver)
	var b strings.Builder
	b.Grow(44)
	b.WriteString("CVSS:")
	b.WriteString(ver)
	for _, p := range [...]struct {
		k string
		v byte
	}{{"AV", v.AV}, {"AC", v.AC}, {"PR", v.PR}, {"UI", v.UI}, {"S", v.S}, {"C", v.C}, {"I", v.I}, {"A", v.A}} {
		b.WriteByte('/')
		b.WriteString(p.k)
		b.WriteByte(':')
		b.WriteByte(p.v)
	}
	return CVSSMetricV3{
		Source: source,
		Type:   typ,
		CVSSData: CVSSDataV3{
			Version:               ver,
			VectorString:          b.String(),
			BaseScore:             Score(base),
			BaseSeverity:          severity3(base),
			AttackVector:          v3AV[v.AV],
			AttackComplexity:      v3LH[v.AC],
			PrivilegesRequired:    v3LH[v.PR],
			UserInteraction:       v3UI[v.UI],
			Scope:                 v3S[v.S],
			ConfidentialityImpact: v3LH[v.C],
			IntegrityImpact:       v3LH[v.I],
			AvailabilityImpact:    v3LH[v.A],
		},
		ExploitabilityScore: Score(expl),
		ImpactScore:         Score(impact),
	}
}

// metricV2 builds a cvssMetricV2 element roughly equivalent to v (CVSS 2
// has no scope or user interaction and coarser impacts).
func metricV2(r *rand.Rand, v v3Vector, source, typ string) CVSSMetricV2 {
	av := v2FromV3AV[v.AV]
	ac := byte('L')
	switch {
	case v.AC == 'H':
		ac = "MH"[r.IntN(2)]
	case v.UI == 'R' || r.Float64() < 0.15:
		ac = 'M'
	}
	au := byte('N')
	if v.PR != 'N' {
		au = 'S'
		if r.Float64() < 0.03 {
			au = 'M'
		}
	}
	imp := func(b byte) byte {
		switch b {
		case 'H':
			if r.Float64() < 0.35 {
				return 'C'
			}
			return 'P'
		case 'L':
			return 'P'
		}
		return 'N'
	}
	c, i, a := imp(v.C), imp(v.I), imp(v.A)

	w := v2CIAWeight
	impact := 10.41 * (1 - (1-w[c])*(1-w[i])*(1-w[a]))
	expl := 20 * v2AVWeight[av] * v2ACWeight[ac] * v2AuWeight[au]
	f := 1.176
	if impact == 0 {
		f = 0
	}
	base := round1(((0.6 * impact) + (0.4 * expl) - 1.5) * f)
	if base < 0 {
		base = 0
	}
	sev := "LOW"
	switch {
	case base >= 7:
		sev = "HIGH"
	case base >= 4:
		sev = "MEDIUM"
	}
	vec := "AV:" + string(av) + "/AC:" + string(ac) + "/Au:" + string(au) +
		"/C:" + string(c) + "/I:" + string(i) + "/A:" + string(a)
	allPriv := c == 'C' && i == 'C' && a == 'C'
	return CVSSMetricV2{
		Source: source,
		Type:   typ,
		CVSSData: CVSSDataV2{
			Version:               "2.0",
			VectorString:          vec,
			BaseScore:             Score(base),
			AccessVector:          v2AV[av],
			AccessComplexity:      v2AC[ac],
			Authentication:        v2Au[au],
			ConfidentialityImpact: v2CIA[c],
			IntegrityImpact:       v2CIA[i],
			AvailabilityImpact:    v2CIA[a],
		},
		BaseSeverity:            sev,
		ExploitabilityScore:     Score(round1(expl)),
		ImpactScore:             Score(round1(impact)),
		ACInsufInfo:             r.Float64() < 0.02,
		ObtainAllPrivilege:      allPriv && r.Float64() < 0.3,
		ObtainUserPrivilege:     !allPriv && c == 'P' && i == 'P' && a == 'P' && r.Float64() < 0.1,
		ObtainOtherPrivilege:    r.Float64() < 0.01,
		UserInteractionRequired: v.UI == 'R',
	}
}

// metricV40 builds a cvssMetricV40 element equivalent to v. long selects
// NVD's long vector form that lists every optional metric as X.
func metricV40(r *rand.Rand, v v3Vector, source, typ string, long bool) CVSSMetricV40 {
	at := byte('N')
	if v.AC == 'H' && r.Float64() < 0.5 || r.Float64() < 0.08 {
		at = 'P'
	}
	ui := byte('N')
	if v.UI == 'R' {
		ui = "PA"[r.IntN(2)]
	}
	sc, si, sa := byte('N'), byte('N'), byte('N')
	if v.S == 'C' {
		sc, si = 'L', 'L'
	}
	av := v.AV
	base, _, _ := score3(v, "3.1")
	// Rough adjustment toward 4.0's typically higher scores for network
	// flaws without requirements and lower ones otherwise.
	adj := 0.0
	if at == 'P' {
		adj -= 1.2
	}
	if ui == 'A' {
		adj -= 0.5
	}
	if v.AV == 'N' && v.PR == 'N' && at == 'N' {
		adj += 0.4
	}
	adj += float64(r.IntN(7)-3) / 10
	s := round1(math.Max(0.1, math.Min(10, base+adj)))
	if v.C == 'N' && v.I == 'N' && v.A == 'N' {
		s = 0
	}
	hl := v3LH
	vec := "CVSS:4.0/AV:" + string(av) + "/AC:" + string(v.AC) + "/AT:" + string(at) +
		"/PR:" + string(v.PR) + "/UI:" + string(ui) + "/VC:" + string(v.C) +
		"/VI:" + string(v.I) + "/VA:" + string(v.A) + "/SC:" + string(sc) +
		"/SI:" + string(si) + "/SA:" + string(sa)
	if long {
		vec += "/E:X/CR:X/IR:X/AR:X/MAV:X/MAC:X/MAT:X/MPR:X/MUI:X/MVC:X/MVI:X/MVA:X/MSC:X/MSI:X/MSA:X/S:X/AU:X/R:X/V:X/RE:X/U:X"
	}
	const nd = "NOT_DEFINED"
	return CVSSMetricV40{
		Source: source,
		Type:   typ,
		CVSSData: CVSSDataV40{
			Version:                                 "4.0",
			VectorString:                            vec,
			BaseScore:                               Score(s),
			BaseSeverity:                            severity3(s),
			AttackVector:                            v4AV[av],
			AttackComplexity:                        hl[v.AC],
			AttackRequirements:                      v4AT[at],
			PrivilegesRequired:                      hl[v.PR],
			UserInteraction:                         v4UI[ui],
			VulnerableSystemConfidentiality:         hl[v.C],
			VulnerableSystemIntegrity:               hl[v.I],
			VulnerableSystemAvailability:            hl[v.A],
			SubsequentSystemConfidentiality:         hl[sc],
			SubsequentSystemIntegrity:               hl[si],
			SubsequentSystemAvailability:            hl[sa],
			ExploitMaturity:                         nd,
			ConfidentialityRequirements:             nd,
			IntegrityRequirements:                   nd,
			AvailabilityRequirements:                nd,
			ModifiedAttackVector:                    nd,
			ModifiedAttackComplexity:                nd,
			ModifiedAttackRequirements:              nd,
			ModifiedPrivilegesRequired:              nd,
			ModifiedUserInteraction:                 nd,
			ModifiedVulnerableSystemConfidentiality: nd,
			ModifiedVulnerableSystemIntegrity:       nd,
			ModifiedVulnerableSystemAvailability:    nd,
			ModifiedSubsequentSystemConfidentiality: nd,
			ModifiedSubsequentSystemIntegrity:       nd,
			ModifiedSubsequentSystemAvailability:    nd,
			Safety:                                  nd,
			Automatable:                             nd,
			Recovery:                                nd,
			ValueDensity:                            nd,
			VulnerabilityResponseEffort:             nd,
			ProviderUrgency:                         nd,
		},
	}
}

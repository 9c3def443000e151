package tenantfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/convengine/engine/azurespeech"
)

// Speech is a tenant's speech section: which recogniser hears it and which voice speaks to it,
// each falling back to the next and to the offline pair last. Credentials are the host's, from
// its environment, never the file's.
//
//	speech:
//	  recognizer: [azure, offline]       # or one name: deepgram, azure or offline
//	  voice: azure:de-DE-KatjaNeural      # elevenlabs:<voice id>, azure:<voice name> or offline
//	  region: germanywestcentral          # the Azure Speech region, within the data_region
//	  end_of_speech: recognizer           # or silence, the default: what ends an utterance
type Speech struct {
	// Recognizers are the recognisers tried in order: "deepgram", "azure", "offline".
	Recognizers []string
	// Voice is the voice as the tenant's Voice holds it: "elevenlabs:<id>", "azure:<name>" or
	// "offline".
	Voice string
	// Region is the Azure Speech region its speech may be processed in.
	Region string
	// RecognizerEndOfSpeech lets a streaming recogniser's endpointing end the tenant's
	// utterances as well as the engine's silence detector (end_of_speech: recognizer).
	RecognizerEndOfSpeech bool
}

// Recognizers and voices a tenant may name.
var (
	speechRecognizers = []string{"deepgram", "azure", "offline"}
	speechVoice       = regexp.MustCompile(`^(offline|elevenlabs:[A-Za-z0-9]{1,64}|azure:[a-z]{2,3}-[A-Z]{2}(-[a-z]{2,12})?-[A-Za-z0-9]{1,64})$`)
)

// parseSpeech reads a tenant's speech section, and checks its Azure region against the
// tenant's data_region: a tenant kept in the EU cannot name an Azure region in the US.
func parseSpeech(raw json.RawMessage, dataRegion string) (*Speech, error) {
	var s struct {
		Recognizer json.RawMessage `json:"recognizer"`
		Voice      string          `json:"voice"`
		Region     string          `json:"region"`
		EndOf      string          `json:"end_of_speech"`
	}
	if err := strict(raw, &s); err != nil {
		return nil, fmt.Errorf("speech: %w", err)
	}
	out := &Speech{Voice: s.Voice, Region: s.Region, RecognizerEndOfSpeech: s.EndOf == "recognizer"}
	if s.EndOf != "" && s.EndOf != "recognizer" && s.EndOf != "silence" {
		return nil, errors.New("speech.end_of_speech: must be silence (the engine's detector) or recognizer (the recogniser's endpointing as well)")
	}
	if len(s.Recognizer) > 0 {
		var one string
		if json.Unmarshal(s.Recognizer, &one) == nil {
			out.Recognizers = []string{one}
		} else if json.Unmarshal(s.Recognizer, &out.Recognizers) != nil || len(out.Recognizers) == 0 {
			return nil, errors.New("speech.recognizer: must be a recogniser's name or a list of them")
		}
	}
	for i, r := range out.Recognizers {
		if !slices.Contains(speechRecognizers, r) || slices.Index(out.Recognizers, r) != i {
			return nil, fmt.Errorf("speech.recognizer: %q is not one of %s, named once", r, strings.Join(speechRecognizers, ", "))
		}
	}
	azure := slices.Contains(out.Recognizers, "azure") || strings.HasPrefix(out.Voice, "azure:")
	switch {
	case out.Voice != "" && !speechVoice.MatchString(out.Voice):
		return nil, errors.New("speech.voice: must be offline, elevenlabs:<voice id> or azure:<voice name> (such as azure:de-DE-KatjaNeural)")
	case out.Region != "" && !modelName.MatchString(out.Region):
		return nil, errors.New("speech.region: must be an Azure region's name, such as westeurope")
	case out.Region != "" && !azure:
		return nil, errors.New("speech.region: is Azure's region, and the tenant names neither its recogniser nor its voice")
	case dataRegion != "" && azure && out.Region == "":
		return nil, fmt.Errorf("speech.region: the tenant's data_region is %q: name the Azure Speech region that keeps its speech there", dataRegion)
	case dataRegion != "" && out.Region != "" && !azurespeech.InRegion(out.Region, dataRegion):
		return nil, fmt.Errorf("speech.region: Azure's region %q is not in the tenant's data_region %q", out.Region, dataRegion)
	case dataRegion != "" && (slices.Contains(out.Recognizers, "deepgram") || strings.HasPrefix(out.Voice, "elevenlabs:")):
		return nil, fmt.Errorf("speech: the tenant's data_region is %q, and Deepgram and ElevenLabs are not pinned to one: name azure (with a region of it) or offline", dataRegion)
	}
	return out, nil
}

package demobank

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/convengine/engine"
)

// EngineKey is the publishable engine key of the demo tenant.
const EngineKey = "pk_demo"

// intentsYAML configures the offline intent model for the demo tenant (package intent).
//
//go:embed intents.yaml
var intentsYAML []byte

// Tenant returns the demo tenant, keyed [EngineKey]: its tools ([ToolsJSON]), its intents,
// the confirm copy of its transfer action and its theme, with the production environment's
// backend at productionURL and the staging one's at stagingURL (none when empty). Each call
// returns a new, validated tenant.
func Tenant(productionURL, stagingURL string) (*engine.Tenant, error) {
	intents, err := yaml.YAMLToJSON(intentsYAML)
	if err != nil {
		return nil, fmt.Errorf("demobank: intents.yaml: %w", err)
	}
	t := &engine.Tenant{
		Key:  EngineKey,
		Name: "Demo Bank",
		Prompt: "You are Demo Bank's assistant. Answer questions about the user's accounts, " +
			"recent transactions and savings goal with the tools you have, and send money to a " +
			"saved payee with the transfer tool, which the user confirms on their device. Be brief.",
		Locale: "en",
		Theme:  json.RawMessage(`{"display_name":"Demo Bank","primary":"#0B5FFF","background":"#FFFFFF"}`),
		Environments: map[string]*engine.Environment{
			engine.EnvProduction: {BackendURL: productionURL},
		},
		Tools:   bytes.Clone(ToolsJSON),
		Intents: intents,
		// Cards and IBANs reach the model as placeholders and the user masked (package pii).
		Privacy: json.RawMessage(`{"preset":"banking"}`),
		// Said and shown before a conversation's first answer (the EU AI Act's article 50).
		Disclosure: map[string]string{
			"en": "You are talking to Demo Bank's automated assistant.",
			"es": "Está hablando con el asistente automático de Demo Bank.",
			"ar": "أنت تتحدث مع المساعد الآلي لبنك ديمو.",
		},
		Actions: map[string]*engine.Action{
			"transfer": {
				Confirm: map[string]engine.ConfirmCopy{
					"en": {Title: "Send money", Body: "Send ${amount|money} to {to}?", ConfirmLabel: "Send", CancelLabel: "Cancel"},
					"es": {Title: "Enviar dinero", Body: "¿Enviar ${amount|money} a {to}?", ConfirmLabel: "Enviar", CancelLabel: "Cancelar"},
					"ar": {Title: "إرسال أموال", Body: "هل تريد إرسال ${amount|money} إلى {to}؟", ConfirmLabel: "إرسال", CancelLabel: "إلغاء"},
				},
				Done: map[string]engine.CardCopy{
					"en": {Title: "Money sent", Line1: "${amount|money} to {to}", Line2: "New balance {result.balance_formatted}", Speak: "Done. I sent ${amount|money} to {to}."},
					"es": {Title: "Dinero enviado", Line1: "${amount|money} a {to}", Line2: "Nuevo saldo {result.balance_formatted}", Speak: "Listo. Envié ${amount|money} a {to}."},
					"ar": {Title: "تم الإرسال", Line1: "${amount|money} إلى {to}", Line2: "الرصيد الجديد {result.balance_formatted}", Speak: "تم. أرسلت ${amount|money} إلى {to}."},
				},
				Declined: map[string]engine.CardCopy{
					"en": {Title: "Transfer not sent", Line1: "{result.message}", Speak: "I couldn't send that. {result.message}"},
					"es": {Title: "Transferencia no enviada", Line1: "{result.message}", Speak: "No pude enviarlo. {result.message}"},
					"ar": {Title: "لم يتم التحويل", Line1: "{result.message}", Speak: "تعذر الإرسال. {result.message}"},
				},
			},
		},
	}
	if stagingURL != "" {
		t.Environments[engine.EnvStaging] = &engine.Environment{BackendURL: stagingURL}
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("demobank: tenant: %w", err)
	}
	return t, nil
}

// ProofEngineKey is the publishable engine key of the demo tenant that runs transfers only with
// a device proof (engine.Tenant.RequireActionProof).
const ProofEngineKey = "pk_demo_proof"

// ProofTenant returns the demo tenant keyed [ProofEngineKey], for a bank started with
// Options.RequireDeviceProof: its transfers run only with a device proof signed by a
// device-bound session's gate key or passkey, of a device the bank enrolled, which the engine
// asks the bank about (its device check, POST /devices/check) before it creates such a session
// and before each transfer. Serve it with a bank of its own: its backend URLs must not be
// those of the [Tenant] that runs actions without proofs.
func ProofTenant(productionURL, stagingURL string) (*engine.Tenant, error) {
	t, err := Tenant(productionURL, stagingURL)
	if err != nil {
		return nil, err
	}
	t.Key, t.RequireActionProof, t.DeviceCheck = ProofEngineKey, true, "/devices/check"
	return t, nil
}

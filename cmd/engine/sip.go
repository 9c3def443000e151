package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/convengine/engine"
	"github.com/convengine/engine/telephony"
	"github.com/convengine/engine/telephony/sip"
)

// sipLines answers the tenants' numbers over SIP on -sip (docs/telephony.md#sip), UDP and TCP,
// with the RTP ports of -sip-rtp-ports; nil when -sip is empty or no tenant has a number.
func sipLines(ctx context.Context, eng *engine.Engine, phone *telephony.Phone, dir *telephony.Directory, opts options, log *slog.Logger) (*sip.Server, error) {
	switch {
	case opts.sipAddr == "":
		return nil, nil
	case dir.Len() == 0:
		log.Info("SIP: off; no tenant has a phone number")
		return nil, nil
	}
	o := &sip.Options{Addr: opts.sipAddr, ExternalIP: opts.sipExternalIP, Directory: dir, Phone: phone}
	if opts.sipRTPPorts != "" {
		r, err := sip.ParsePortRange(opts.sipRTPPorts)
		if err != nil {
			return nil, fmt.Errorf("-sip-rtp-ports: %w", err)
		}
		o.RTPPorts = r
	}
	srv, err := sip.New(eng, o)
	if err != nil {
		return nil, err
	}
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	log.Info("SIP: answering", "addr", srv.Addr(), "rtpPorts", opts.sipRTPPorts)
	return srv, nil
}

// printSIP writes the banner's SIP lines of the demo tenants.
func printSIP(w io.Writer, d *demo, srv *sip.Server) {
	if srv == nil {
		return
	}
	fmt.Fprintf(w, "%s SIP: sip:%s@%s (demo caller %s, PIN %s)\n", d.tenant.Key, demoNumber, srv.Addr(), demoCaller, d.pin)
	fmt.Fprintf(w, "%s SIP: sip:%s@%s (demo caller %s, PIN %s)\n", d.proof.Key, demoProofNumber, srv.Addr(), demoCaller, d.pin)
}

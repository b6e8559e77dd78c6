// Program otelcol is a minimal OpenTelemetry Collector for the tests: the OTLP
// receiver (gRPC and HTTP) and the file exporter, nothing else. It is written
// by hand the way the OpenTelemetry Collector Builder (ocb) writes a
// distribution's main.go and components.go, in one file.
//
// scripts/testenv/setup.sh (setup_otelcol) builds it into
// ~/.cache/docservice/bin/otelcol-<version>, where <version> is the
// go.opentelemetry.io/collector/otelcol version that go.mod requires; go.sum
// pins every module (go build -mod=readonly). test/support/otel-collector.ts
// starts it with a config of its own and reads the spans it wrote.
//
// Every collector module is at one release, v0.161.0 (its v1 modules, such as
// pdata and confmap, at v1.67.0). It is the newest whose fileexporter passes
// `go mod tidy` here: from v0.162.0 to v0.165.1 the exporter's tests import
// the contrib module extension/encoding/otlpencodingextension of the same
// release, and the Go module proxy refuses those versions (403), so no
// complete go.sum can be made for them. To move to another release v0.N.0
// (with v1.M.0), name it for all five direct requirements and run
// `go mod tidy` (GOFLAGS=-mod=mod if the environment sets -mod=readonly):
//
//	go get go.opentelemetry.io/collector/otelcol@v0.N.0 \
//	  go.opentelemetry.io/collector/receiver/otlpreceiver@v0.N.0 \
//	  go.opentelemetry.io/collector/confmap/provider/envprovider@v1.M.0 \
//	  go.opentelemetry.io/collector/confmap/provider/fileprovider@v1.M.0 \
//	  github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter@v0.N.0
//	go mod tidy
package main

import (
	"log"
	"runtime/debug"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

// Set by setup.sh: -ldflags "-X main.version=v0.161.0".
var version = "dev"

func main() {
	info := component.BuildInfo{
		Command:     "otelcol",
		Description: "DocService test OpenTelemetry Collector (otlp receiver, file exporter)",
		Version:     version,
	}

	set := otelcol.CollectorSettings{
		BuildInfo: info,
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				// file: --config file:PATH. env is required too: otelcol makes it
				// the default scheme of ${...}, and the resolver refuses a default
				// scheme without its provider.
				ProviderFactories: []confmap.ProviderFactory{
					envprovider.NewFactory(),
					fileprovider.NewFactory(),
				},
			},
		},
		ProviderModules: map[string]string{
			"env":  module("go.opentelemetry.io/collector/confmap/provider/envprovider"),
			"file": module("go.opentelemetry.io/collector/confmap/provider/fileprovider"),
		},
	}

	cmd := otelcol.NewCommand(set)
	if err := cmd.Execute(); err != nil {
		log.Fatalf("collector server run finished with error: %v", err)
	}
}

func components() (otelcol.Factories, error) {
	var err error
	factories := otelcol.Factories{
		Telemetry: otelconftelemetry.NewFactory(),
	}

	factories.Extensions, err = otelcol.MakeFactoryMap[extension.Factory]()
	if err != nil {
		return otelcol.Factories{}, err
	}
	factories.ExtensionModules = map[component.Type]string{}

	factories.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](
		otlpreceiver.NewFactory(),
	)
	if err != nil {
		return otelcol.Factories{}, err
	}
	factories.ReceiverModules = map[component.Type]string{
		otlpreceiver.NewFactory().Type(): module("go.opentelemetry.io/collector/receiver/otlpreceiver"),
	}

	factories.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](
		fileexporter.NewFactory(),
	)
	if err != nil {
		return otelcol.Factories{}, err
	}
	factories.ExporterModules = map[component.Type]string{
		fileexporter.NewFactory().Type(): module("github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"),
	}

	factories.Processors, err = otelcol.MakeFactoryMap[processor.Factory]()
	if err != nil {
		return otelcol.Factories{}, err
	}
	factories.ProcessorModules = map[component.Type]string{}

	factories.Connectors, err = otelcol.MakeFactoryMap[connector.Factory]()
	if err != nil {
		return otelcol.Factories{}, err
	}
	factories.ConnectorModules = map[component.Type]string{}

	return factories, nil
}

// "PATH VERSION" of a module linked into this binary, as ocb writes it into
// components.go (here read from the build info, so it cannot go stale).
func module(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == path {
				return path + " " + dep.Version
			}
		}
	}
	return path
}

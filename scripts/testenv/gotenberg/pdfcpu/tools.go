//go:build tools

package tools

import _ "github.com/pdfcpu/pdfcpu/cmd/pdfcpu"

//go:build tools

package tools

import _ "github.com/gotenberg/gotenberg/v8/cmd/gotenberg-libreoffice"

// Package docker holds what makes sharq's image a drop-in for Kafka's
// images (docs/docker.md): the file-system layout (rootfs.sh), the shims
// the stock Testcontainers modules' start scripts run (etc/, bin/), the
// entry point, the offline build (build.sh), a compose file written for
// apache/kafka (compose/) and the module programs (tc/), one per language.
//
// Its tests (docker_test.go) need a Docker engine: they build the image
// with build.sh and run every stock module, unchanged, against it. Without
// an engine they skip, saying why; with SHARQTEST_REQUIRE_DOCKER=1 (set by
// .ci/test in CI) they fail instead.
//
// The package has no Go code of its own beyond this comment; tc/go is a
// module of its own, so that testcontainers-go stays out of sharq's go.mod.
package docker

// The sandbox ("pause") process of a pod on the test node (test/support/kube-node.ts):
// it holds the pod's namespaces, reaps the zombies of processes that share its
// PID namespace, and exits on SIGINT or SIGTERM. Built static by
// scripts/testenv/kubernetes.sh into the image registry.k8s.io/pause:3.10.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static void ignore(int sig) { (void)sig; }

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    puts("docservice-pause 1");
    return 0;
  }
  // As PID 1 the kernel drops signals that have no handler, so each gets one;
  // they stay blocked and are taken with sigwait.
  sigset_t wanted;
  sigemptyset(&wanted);
  int signals[] = {SIGINT, SIGTERM, SIGCHLD};
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
    sigaddset(&wanted, signals[i]);
    struct sigaction action = {.sa_handler = ignore};
    sigaction(signals[i], &action, NULL);
  }
  sigprocmask(SIG_BLOCK, &wanted, NULL);
  for (;;) {
    int sig;
    if (sigwait(&wanted, &sig) != 0) continue;
    if (sig != SIGCHLD) return 0;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
  }
}

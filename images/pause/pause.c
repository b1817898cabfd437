/*
 * pause: the process of a pod's sandbox container, as Kubernetes' pause image
 * (build/pause/linux/pause.c in kubernetes/kubernetes).
 *
 * It holds the pod's namespaces (network, IPC, and PID when the pod shares its process
 * namespace) and does nothing else: it sleeps in pause(2) until a signal arrives.
 * - SIGTERM and SIGINT end it with exit status 0, so a sandbox stop is a clean exit.
 * - SIGCHLD makes it reap every exited child with waitpid(WNOHANG). As PID 1 of a shared
 *   PID namespace it inherits the orphans of every container in the pod; without reaping
 *   they would stay zombies.
 * - `pause -v` prints its version and exits 0.
 *
 * Build: gcc -static -Os -o pause pause.c (no libc needed at run time: the image is FROM scratch).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAUSE_VERSION "1.0"

static void on_terminate(int signo) {
  (void)signo;
  /* _exit: the only exit that is async-signal-safe. */
  _exit(0);
}

static void on_child(int signo) {
  (void)signo;
  int saved_errno = errno;
  /* One SIGCHLD may stand for several exited children (signals do not queue), so reap until
   * none is left. */
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  errno = saved_errno;
}

static int install(int signo, void (*handler)(int)) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  /* SA_NOCLDSTOP: stopped (not exited) children need no reaping. SA_RESTART keeps no syscall of
   * ours interrupted needlessly; pause(2) returns after any handled signal regardless. */
  action.sa_flags = SA_RESTART | (signo == SIGCHLD ? SA_NOCLDSTOP : 0);
  return sigaction(signo, &action, NULL);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    printf("pause %s (k8ts)\n", PAUSE_VERSION);
    return 0;
  }
  if (argc > 1) {
    fprintf(stderr, "usage: %s [-v]\n", argv[0]);
    return 1;
  }
  if (getpid() != 1) {
    /* Not an error: useful when run by hand, but orphans are only inherited as PID 1. */
    fprintf(stderr, "pause: warning: not running as PID 1\n");
  }
  if (install(SIGTERM, on_terminate) < 0 || install(SIGINT, on_terminate) < 0 ||
      install(SIGCHLD, on_child) < 0) {
    perror("pause: sigaction");
    return 2;
  }
  for (;;) {
    pause();
  }
}

/*
 * inhost - test program: runs CMD with the host name set to NAME, its bytes
 * as given (the hostname tool refuses what the kernel accepts), in a UTS
 * namespace of its own: the machine's name is never changed. Needs root
 * (CAP_SYS_ADMIN); exit 3 when the namespace cannot be made.
 *   inhost NAME CMD [ARGS...]
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (unshare(CLONE_NEWUTS) != 0) {
		perror("unshare");
		return 3;
	}
	if (sethostname(argv[1], strlen(argv[1])) != 0) {
		perror("sethostname");
		return 3;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}

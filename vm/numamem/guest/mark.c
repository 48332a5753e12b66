/*
 * mark start|stop: open or close a counting window of the numamem QEMU
 * plugin (vm/numamem).
 *
 * The plugin cannot read guest registers (QEMU 7.2's plugin API), so a window
 * is marked by executing an instruction it recognises: "xchg %bx,%bx" opens
 * one, "xchg %cx,%cx" closes it.  Both are no-ops, on real hardware and in a
 * guest without the plugin, so scripts may run this anywhere.  At a start the
 * plugin reads its filter file again: write the file first.
 */
#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "start") == 0)
		__asm__ volatile("xchg %%bx, %%bx" ::: "memory");
	else if (argc == 2 && strcmp(argv[1], "stop") == 0)
		__asm__ volatile("xchg %%cx, %%cx" ::: "memory");
	else
	{
		fprintf(stderr, "usage: mark start|stop\n");
		return 2;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0

#include "textflag.h"

// func tscAux() uint32: IA32_TSC_AUX, where Linux keeps (node << 12) | cpu
TEXT ·tscAux(SB), NOSPLIT, $0-4
	RDTSCP
	MOVL CX, ret+0(FP)
	RET

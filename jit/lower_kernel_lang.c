/* placeholder */
#include "target.h"

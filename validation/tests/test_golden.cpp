#include "testing/catch.hpp"

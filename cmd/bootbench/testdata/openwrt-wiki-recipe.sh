# The OpenWrt wiki's OpenSSL benchmark recipe ("OpenSSL benchmarks" page): the line it
# runs over /proc/cpuinfo and the one over openssl speed's output saved in /tmp/sslspeed,
# copied verbatim. TestOpenWrtExportIsTheRecipe runs them on fixture files.
cat /proc/cpuinfo | awk '/system type/ {FS = ":" ; print "|" $2}; /machine/ {FS = ":" ; print $2}; /cpu model/ {FS = ":" ; print $2}; /BogoMIPS/ {FS = ":" ; print $2 " |"}' | sed ':M;N;$!bM;s#\n# |#g'
awk -v ORS="" '$1 ~ /OpenSSL/ {print "| " $2 " |"} $1 ~ /(md5|sha)/ {print "  " $5 " |"} $1 ~ /(des|aes)/ {b = b "  " $6 " |"} $1 ~ /(rsa|dsa)/ {print b "  " $6 " |  " $7 " |";b=""} END { print "\n" }' /tmp/sslspeed | sed 's/\.\(..\)k/\10/g'

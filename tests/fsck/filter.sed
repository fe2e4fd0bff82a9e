# Lines of fsck.famfs output that vary from run to run or host to host.
s/[0-9a-fA-F]\{8\}-[0-9a-fA-F]\{4\}-[0-9a-fA-F]\{4\}-[0-9a-fA-F]\{4\}-[0-9a-fA-F]\{12\}/<uuid>/g
s/(this host is [a-z]*)/(this host is <role>)/
s|/[^ ]*/image\b|image|g
s/"role":"[a-z]*"/"role":"<role>"/

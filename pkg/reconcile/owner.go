package reconcile

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
)

// ownerRecheck returns a check, made at most once per sync, that dobj is
// still the DeployObject the cache shows and is not being deleted, read
// fresh from the API server: a child is adopted only by a live owner, as
// the Deployment controller's controller-ref manager does.
func ownerRecheck(client clientset.Interface, dobj *appv1.DeployObject) func(context.Context) error {
	var once sync.Once
	var err error
	return func(ctx context.Context) error {
		once.Do(func() {
			fresh, getErr := client.AppV1().DeployObjects(dobj.Namespace).Get(ctx, dobj.Name, metav1.GetOptions{})
			switch {
			case getErr != nil:
				err = fmt.Errorf("reading DeployObject before adopting: %w", getErr)
			case fresh.UID != dobj.UID:
				err = fmt.Errorf("DeployObject %s was replaced (UID %s, cached %s); not adopting", dobj.Name, fresh.UID, dobj.UID)
			case fresh.DeletionTimestamp != nil:
				err = fmt.Errorf("DeployObject %s is being deleted; not adopting", dobj.Name)
			}
		})
		return err
	}
}
